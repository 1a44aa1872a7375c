import sys

from fastmoments.cli.main import main

sys.exit(main())
