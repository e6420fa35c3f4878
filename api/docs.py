"""``/docs``: Swagger UI (5.x, which reads OpenAPI 3.1) served from the assets the installed
``fastapi-offline`` package ships, so the API's documentation works offline and needs no script
from another origin (the page's CSP allows scripts from this server only, hence its start-up
script is a file too, not inline). Only the files named here are served."""

from __future__ import annotations

from importlib.resources import files

from fastapi import APIRouter, HTTPException, status
from fastapi.responses import FileResponse, HTMLResponse, Response

__all__ = ["ASSETS_PATH", "router"]

ASSETS_PATH = "/docs/assets"
_BUNDLE = files("fastapi_offline") / "static"
_ASSETS = {"swagger-ui.css": "text/css", "swagger-ui-bundle.js": "text/javascript", "favicon.png": "image/png"}
_START = """window.addEventListener("load", () => {
  window.ui = SwaggerUIBundle({
    url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: true, layout: "BaseLayout",
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
  });
});
"""
_PAGE = f"""<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>itemsmith API</title>
  <link rel="stylesheet" href="{ASSETS_PATH}/swagger-ui.css">
  <link rel="icon" type="image/png" href="{ASSETS_PATH}/favicon.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="{ASSETS_PATH}/swagger-ui-bundle.js"></script>
  <script src="{ASSETS_PATH}/start.js"></script>
</body>
</html>
"""

router = APIRouter(include_in_schema=False)


@router.get("/docs")
def docs_page() -> HTMLResponse:
    return HTMLResponse(_PAGE)


@router.get(ASSETS_PATH + "/start.js")
def docs_start() -> Response:
    return Response(_START, media_type="text/javascript")


@router.get(ASSETS_PATH + "/{name}")
def docs_asset(name: str) -> FileResponse:
    media_type = _ASSETS.get(name)
    if media_type is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no documentation asset {name!r}")
    return FileResponse(str(_BUNDLE / name), media_type=media_type, headers={"Cache-Control": "public, max-age=86400"})
