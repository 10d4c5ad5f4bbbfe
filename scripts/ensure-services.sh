#!/usr/bin/env bash
# Makes sure the services the tests and benchmark use are running on this machine (Debian):
#   PostgreSQL on 127.0.0.1:5432, user postgres / password postgres (trust also works),
#   RabbitMQ on 127.0.0.1:5672 (guest/guest) serving AMQP 1.0 through rabbitmq_amqp1_0, and on 5671 over TLS
#   with SASL PLAIN and EXTERNAL (scripts/ensure-rabbitmq-tls.sh);
#   and the tools the tests call: ss (iproute2), promtool (prometheus), chromium (the console's browser test).
# Installs from Debian's packages what is missing, starts what is stopped, waits until both answer.
# Idempotent; when everything already runs it returns in about two seconds (one rabbitmqctl call checks the
# client certificate's user).
set -euo pipefail
t0=$(date +%s%N)
say() { echo "[ensure-services $(( ($(date +%s%N) - t0) / 1000000 )) ms] $*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_updated=
apt_install() {
  [ -n "$apt_updated" ] || { as_root apt-get update -qq; apt_updated=1; }
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# The crash suite drops the service's broker connections with `ss -K` (iproute2).
command -v ss >/dev/null 2>&1 || { say "installing iproute2 (Debian package)"; apt_install iproute2; }
# The alert rules' tests run `promtool check rules` and `promtool test rules` (Debian's prometheus package).
command -v promtool >/dev/null 2>&1 || { say "installing promtool (Debian package prometheus)"; apt_install --no-install-recommends prometheus; }
# The console's browser test drives Debian's Chromium headless through playwright-core, which downloads none.
command -v chromium >/dev/null 2>&1 || { say "installing chromium (Debian package)"; apt_install chromium; }

# ---------- PostgreSQL ----------
pg_ready() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
if ! command -v pg_isready >/dev/null 2>&1 || ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
  say "installing postgresql (Debian package)"
  apt_install postgresql
fi
if ! pg_ready; then
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  say "starting PostgreSQL $version"
  as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  for _ in $(seq 1 60); do pg_ready && break; sleep 0.5; done
  pg_ready || { echo "PostgreSQL did not answer on 127.0.0.1:5432; see /var/log/postgresql/" >&2; exit 1; }
fi
# A fresh Debian cluster asks for a password over TCP: give postgres the one the tests use.
if ! PGPASSWORD=postgres psql -h 127.0.0.1 -U postgres -d postgres -Atqc 'select 1' >/dev/null 2>&1; then
  say "setting the postgres password used by the tests"
  as_root su postgres -c "psql -qc \"alter user postgres password 'postgres'\"" >/dev/null
fi
say "PostgreSQL answering on 127.0.0.1:5432"

# ---------- RabbitMQ with AMQP 1.0 ----------
# Prints amqp10 | amqp091 | closed: sends the AMQP 1.0 SASL header and reads the 8-byte answer.
probe() {
  node -e '
    const s = require("net").connect(5672, "127.0.0.1");
    const out = (r) => { console.log(r); s.destroy(); process.exit(0); };
    s.setTimeout(2000, () => out("closed"));
    s.on("error", () => out("closed"));
    s.on("connect", () => s.write(Buffer.from([65,77,81,80,3,1,0,0])));
    s.on("data", (d) => out(d.subarray(0, 8).equals(Buffer.from([65,77,81,80,3,1,0,0])) ? "amqp10" : "amqp091"));
  '
}
state=$(probe)
if [ "$state" != amqp10 ]; then
  if ! command -v rabbitmq-server >/dev/null 2>&1; then
    say "installing rabbitmq-server (Debian package)"
    apt_install rabbitmq-server
  fi
  # A running node enables the plugin live; a stopped one gets it written for its next start.
  if [ "$state" = closed ]; then
    as_root rabbitmq-plugins enable --offline rabbitmq_amqp1_0 >/dev/null
    say "starting RabbitMQ"
    as_root rabbitmq-server -detached
  else
    as_root rabbitmq-plugins enable rabbitmq_amqp1_0 >/dev/null
  fi
  # `rabbitmqctl await_startup` fails at once while the node boots, so poll the port instead.
  for _ in $(seq 1 180); do [ "$(probe)" = amqp10 ] && break; sleep 0.5; done
  [ "$(probe)" = amqp10 ] || { echo "RabbitMQ did not serve AMQP 1.0 on 127.0.0.1:5672 within 90 s; see /var/log/rabbitmq/" >&2; exit 1; }
fi
say "RabbitMQ serving AMQP 1.0 on 127.0.0.1:5672"

# ---------- AMQP over TLS on 5671 (Advanced Event Mesh's transport) ----------
bash "$(dirname "$0")/ensure-rabbitmq-tls.sh"
