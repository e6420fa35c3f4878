"""Packaging: the repository's top-level folders are installed as subpackages of `itemsmith`
(`agents/` -> `itemsmith.agents`, ...), so the distribution adds exactly one top-level name.
Metadata and dependencies live in pyproject.toml."""

from setuptools import find_packages, setup

SUBPACKAGES = ("agents", "api", "cli", "handlers", "items", "sandbox", "service", "templates_bank", "verification")

packages = ["itemsmith"]
package_dir = {"itemsmith": "itemsmith"}
for top in SUBPACKAGES:
    package_dir[f"itemsmith.{top}"] = top
    packages += [f"itemsmith.{top}", *(f"itemsmith.{top}.{sub}" for sub in find_packages(top))]

setup(packages=packages, package_dir=package_dir)
