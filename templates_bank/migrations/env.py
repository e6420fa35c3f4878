"""Alembic environment: runs online only, on the connection `templates_bank.storage` passes in."""

from alembic import context

from itemsmith.templates_bank.storage import VERSION_TABLE, Base

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    version_table=VERSION_TABLE,
    render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters tables by copying them
)
with context.begin_transaction():
    context.run_migrations()
