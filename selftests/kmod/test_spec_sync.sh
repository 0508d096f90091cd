#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The YAML spec of the esa family and uapi/esa_genl.h describe the same API.
cd "$(dirname "$0")/../.." || exit 1
PY=$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)
exec "$PY" selftests/kmod/spec_sync.py "$PWD"
