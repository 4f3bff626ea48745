#!/bin/bash
# The guest half of scripts/demo: load taproot, show its status, unload it.
set -euo pipefail
cd "$(dirname "$0")/../.."

step() {
	echo
	echo "demo: $*"
}

step "loading the module: taprootctl load"
ctl/taprootctl load
step "what it reports: taprootctl status"
ctl/taprootctl status
step "unloading it: taprootctl unload"
ctl/taprootctl unload
