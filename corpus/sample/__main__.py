"""``python -m corpus.sample``: write a synthetic landing zone (see corpus.sample.landing_zone)."""

import sys

from corpus.sample.landing_zone import main

sys.exit(main())
