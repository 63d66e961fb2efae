#!/usr/bin/env bash
# The SFTP server the bank-file rails are tested against: Debian's openssh-server, installed when
# missing (as root, through apt). Only the binary is used: the tests start their own sshd on a
# loopback port with a configuration, host key and authorized key of their own
# (test/harness/sftp-server.ts); the package's own service is kept from starting.
set -euo pipefail
if [ -x /usr/sbin/sshd ]; then exit 0; fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "install-sftp-server: /usr/sbin/sshd not found: install Debian's openssh-server" >&2
  exit 1
fi
echo "install-sftp-server: installing openssh-server (Debian package)…" >&2
# No service start during the install (no sshd on port 22 as a side effect).
policy=/usr/sbin/policy-rc.d
had_policy=0
[ -e "$policy" ] && had_policy=1
if [ "$had_policy" = 0 ]; then printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy"; fi
trap '[ "$had_policy" = 0 ] && rm -f "$policy"' EXIT
apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssh-server >/dev/null
