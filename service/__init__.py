"""Use cases of the service shared by the REST API and the command line: API keys, owner-scoped
access to banks, the review listing, handler uploads, and long-running jobs."""
