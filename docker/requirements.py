"""Print the pinned requirements of the project and the given extras (the image's dependency layer).

    python docker/requirements.py pyproject.toml docker,postgres,celery,k8s

The image installs these before it copies the code, so a code change rebuilds one small layer.
"""

import sys
import tomllib

with open(sys.argv[1], "rb") as fh:
    project = tomllib.load(fh)["project"]
extras = project["optional-dependencies"]
requirements = list(project["dependencies"])
for extra in sys.argv[2].split(","):
    requirements += [r for r in extras[extra] if not r.startswith("corpus[")]
print("\n".join(requirements))
