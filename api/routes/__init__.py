"""All routes of the REST API, collected in one router (one module per resource)."""

from fastapi import APIRouter

from itemsmith.api.routes import banks, health, imports, jobs, releases, templates

api_router = APIRouter()
api_router.include_router(health.router)
api_router.include_router(banks.router)
api_router.include_router(imports.router)
api_router.include_router(templates.router)
api_router.include_router(releases.router)
api_router.include_router(jobs.router)
