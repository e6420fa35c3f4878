"""The API's settings: those of the service it serves (`itemsmith.service.settings`), read from
``ITEMSMITH_API_*`` environment variables; the database is ``ITEMSMITH_DATABASE_URL``."""

from itemsmith.service.settings import ServiceSettings as ApiSettings

__all__ = ["ApiSettings"]
