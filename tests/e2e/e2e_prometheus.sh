#!/usr/bin/env bash
# e2e_prometheus.sh - the Grafana dashboard deploy/grafana/xdpban.json and the metrics it reads,
# under a real Prometheus server (Debian's package): xdpband runs in the receiver namespace of
# the daemon helpers (xbd_setup, tests/e2e/e2e_lib.sh) with its metrics on 127.0.0.1:9433 there, and the test's own prometheus
# (its own config, a TSDB in the test's temp directory, a 1 s scrape interval, its web listener
# on 127.0.0.1:9090 of the same namespace) scrapes it while traffic flows: good datagrams,
# malformed ones that get a source banned, errors whose hop count disagrees, datagrams from
# banned sources, a manual ban and a manual prefix ban.
#   metrics_documented       the metrics a scrape returns (name, labels, type) are exactly those
#                            of deploy/xdpband.8, section METRICS, and each has a help text
#   dashboard_model          the JSON is a dashboard Grafana imports: a Prometheus datasource
#                            variable that every panel and query uses, unique panel ids, every
#                            panel (but rows) with queries, each only over documented metrics
#   promtool_accepts         promtool check metrics finds nothing wrong in a scrape (names,
#                            types, help texts): it exits 0 and prints nothing
#   prometheus_scrapes       Prometheus's target is up, and what it scraped last equals the
#                            values sent (drop_banned, errors, bans, suspect errors)
#   instance_variable        the dashboard's instance variable (label_values) finds the daemon
#   panel_queries            every query of every panel (variables substituted: $instance by
#                            the variable's value, $__rate_interval by 2m) returns data through
#                            /api/v1/query, with the labels and values the test expects of it
#                            (reason="drop_banned" above 0 for the drops, class="malformed" for
#                            the classes, 3 bans in force (2 sources and a prefix), nothing lost...); a panel the test
#                            has no expectation for fails, as does an expectation with no panel
#   table_fill_matches_maps  the table gauges Prometheus holds equal the pinned tables read with
#                            bpftool and the capacities of xdpban status --json
# Every process, namespace, pin and file it makes is removed at exit, also on failure
# (tests/e2e/e2e_lib.sh's cleanup). Documentation addresses only; it never touches an interface it
# did not create, nor the system's prometheus (its config, its data or its service).
#
# Usage: tests/e2e/e2e_prometheus.sh BUILD_DIR
# shellcheck disable=SC2317 # the cases are called through e2e_case
set -uo pipefail
# shellcheck source=tests/e2e/e2e_lib.sh
source "$(dirname "$0")/e2e_lib.sh"
cd "$(dirname "$0")/../.." || exit 1

CASES=(metrics_documented promtool_accepts dashboard_model prometheus_scrapes instance_variable
	panel_queries table_fill_matches_maps)
xbd_require "${CASES[@]}"
command -v prometheus >/dev/null ||
	xbd_skip_all "prometheus is not installed (make deps: prometheus)" "${CASES[@]}"

readonly DASHBOARD=$PWD/deploy/grafana/xdpban.json MANPAGE=$PWD/deploy/xdpband.8
readonly METRICS=127.0.0.1:9433 PROM=127.0.0.1:9090 RATE_INTERVAL=2m
readonly GOOD4=192.0.2.20    # good datagrams: passed
readonly BAD4=192.0.2.30     # 4 malformed frames (limit 3): banned, then 3 datagrams dropped
readonly HOPS4=192.0.2.50    # an error at TTL 64, then one at TTL 50: a suspect error
readonly MANUAL4=198.51.100.40 # xdpban ban, then 3 datagrams dropped
readonly PREFIX4=203.0.113.0/24 DENIED4=203.0.113.5 # xdpban ban of a prefix: 2 datagrams denied

# What each query of the dashboard must return, by "panel title|refId": space-separated
# LABEL=VALUE:CHECK, one per series that must be there (CHECK: >0, =N, or any), where
# instance=$METRICS stands for the one series of a query that keeps only the instance.
declare -A EXPECT=(
	["Banned sources|A"]="instance=$METRICS:=3"
	["Tracked sources|A"]="instance=$METRICS:>0"
	["Offenders|A"]="instance=$METRICS:any"
	["Tracking table fill|A"]="instance=$METRICS:>0"
	["Ban table fill|A"]="instance=$METRICS:>0"
	["Events lost|A"]="instance=$METRICS:=0"
	["Drops per second, by reason|A"]="reason=drop_banned:>0 reason=drop_deny:>0 reason=drop_malformed:>0 reason=drop_error:=0"
	["Passed per second|A"]="reason=passed:>0 reason=passed_trusted:=0"
	["Traffic by verdict|A"]="reason=passed:>0 reason=drop_banned:>0 reason=drop_deny:>0 reason=drop_malformed:>0 reason=passed_trusted:=0 reason=drop_error:=0"
	["Errors counted per second|A"]="instance=$METRICS:>0"
	["Errors per class per second|A"]="class=malformed:>0 class=reported:=0 class=protocol:=0 class=probe:=0"
	["Bans per second|A"]="instance=$METRICS:>0"
	["Bans per second|B"]="instance=$METRICS:=0"
	["Bans per second|C"]="instance=$METRICS:=0"
	["Errors not counted per second|A"]="instance=$METRICS:>0"
	["Errors not counted per second|B"]="instance=$METRICS:=0"
	["Errors not counted per second|C"]="instance=$METRICS:=0"
	["Refused and lost per second|A"]="instance=$METRICS:=0"
	["Refused and lost per second|B"]="instance=$METRICS:=0"
	["Refused and lost per second|C"]="instance=$METRICS:=0"
	["Sources|A"]="instance=$METRICS:=3"
	["Sources|B"]="instance=$METRICS:>0"
	["Sources|C"]="instance=$METRICS:any"
	["Table fill|A"]="instance=$METRICS:>0"
	["Table fill|B"]="instance=$METRICS:>0"
	["Would have dropped per second (observe mode)|A"]="instance=$METRICS:=0"
	["Would have dropped per second (observe mode)|B"]="instance=$METRICS:=0"
	["Would have dropped per second (observe mode)|C"]="instance=$METRICS:=0"
)

# --- helpers -------------------------------------------------------------------------------------

in_ns() { ip netns exec "$XBD_NS_R" "$@"; }
scrape() { nsenter --net="/run/netns/$XBD_NS_R" curl -sf --max-time 5 "http://$METRICS/metrics"; }

# prom_queries EXPR...: the result of each instant query as "N<TAB>LABELS VALUE" lines (N: the
# index of its EXPR, from 0; LABELS as k=v,k=v, sorted, __name__ left out, "-" for none), or
# "N<TAB>error: ..." (and status 1). One python for all: each costs a start under load.
prom_queries() {
	in_ns "$XBD_PY" -c '
import json, sys, urllib.error, urllib.parse, urllib.request
failed = 0
for n, expr in enumerate(sys.argv[2:]):
    url = f"http://{sys.argv[1]}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            d = json.load(r)
        if d.get("status") != "success" or d["data"]["resultType"] != "vector":
            raise ValueError(d)
    except Exception as e:
        body = e.read().decode(errors="replace")[:200] if isinstance(e, urllib.error.HTTPError) else ""
        print(f"{n}\terror: {e} {body}")
        failed = 1
        continue
    for s in d["data"]["result"]:
        labels = ",".join(f"{k}={v}" for k, v in sorted(s["metric"].items()) if k != "__name__")
        labels, value = labels or "-", s["value"][1]
        print(f"{n}\t{labels} {value}")
sys.exit(failed)' "$PROM" "$@"
}

# prom_query EXPR: the "LABELS VALUE" lines of one query, or "error: ..." and status 1.
prom_query() {
	local out rc
	out=$(prom_queries "$1")
	rc=$?
	[[ -z $out ]] || cut -f2- <<<"$out"
	return $rc
}

# prom_value EXPR: the value of the one series EXPR returns, or nothing.
prom_value() {
	local out
	out=$(prom_query "$1") || return 1
	[[ $(wc -l <<<"$out") == 1 ]] && echo "${out##* }"
}
prom_value_is() { [[ $(prom_value "$1") == "$2" ]]; }

# scraped_families: "NAME{LABEL,...} TYPE" of every metric family in a scrape, sorted.
scraped_families() {
	scrape | "$XBD_PY" -c '
import re, sys
types, labels, helps = {}, {}, set()
for line in sys.stdin:
    if line.startswith("# TYPE "):
        _, _, name, kind = line.split()
        types[name] = kind
    elif line.startswith("# HELP "):
        if len(line.split(None, 3)) == 4:
            helps.add(line.split()[2])
    elif line.strip():
        m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? ", line)
        names = sorted(set(re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)=\"", m.group(2) or "")))
        labels.setdefault(m.group(1), set()).add(",".join(names))
for name, kind in sorted(types.items()):
    if name not in helps:
        sys.exit(f"{name} has no help text")
    ls = labels.get(name, {""})
    if len(ls) != 1:
        sys.exit(f"{name} has samples with different labels: {ls}")
    ls = ls.pop()
    print(f"{name}{{{ls}}} {kind}" if ls else f"{name} {kind}")
'
}

# manpage_families: the same, from the entries of xdpband.8's METRICS (".BI NAME{LABELS} " TYPE"").
manpage_families() {
	sed -n '/^\.SH METRICS$/,/^\.SH /p' "$MANPAGE" |
		sed -n 's/^\.BI \(xdpban_[a-z_]*\)\({[a-z_,]*}\)\? " \(counter\|gauge\)"$/\1\2 \3/p' | sort
}

# send_traffic: one scapy run from the sender namespace, in this order (one veth queue, so each
# frame meets the state the ones before it left).
send_traffic() {
	ip netns exec "$XBD_NS_S" "$XBD_PY" - "$XBD_IF_S" "$GOOD4" "$BAD4" "$HOPS4" "$MANUAL4" \
		"$DENIED4" <<'EOF' 2>>"$XBD_TMP/scapy.err"
import sys
from scapy.all import Ether, IP, TCP, UDP, conf, sendp
conf.verb = 0
iface, good, bad, hops, manual, denied = sys.argv[1:]
def frames(kind, src, count, ttl=64):
    l4 = TCP(sport=40000, dport=80, flags="SF") if kind == "synfin" else UDP(sport=40000, dport=53) / b"hello"
    return [Ether(dst="ff:ff:ff:ff:ff:ff") / IP(src=src, dst="192.0.2.1", ttl=ttl) / l4] * count
sendp(frames("udp", good, 5) + frames("synfin", bad, 4) + frames("udp", bad, 3) +
      frames("synfin", hops, 1, 64) + frames("synfin", hops, 1, 50) +
      frames("udp", manual, 3) + frames("udp", denied, 2), iface=iface)
EOF
}

# --- cases ---------------------------------------------------------------------------------------

case_metrics_documented() {
	local scraped documented
	scraped=$(scraped_families 2>&1) || { E2E_WHY="scrape: $scraped"; return 1; }
	documented=$(manpage_families)
	[[ -n $documented ]] || { E2E_WHY="no metric entries in $MANPAGE, section METRICS"; return 1; }
	e2e_expect "metrics a scrape returns (<) against those xdpband.8 documents (>)" "" \
		"$(diff <(echo "$scraped") <(echo "$documented") | grep '^[<>]' | tr '\n' ' ')"
}

# promtool (Debian's prometheus package) lints the exposition: a metric name holding a type
# ("counter"), a counter not ending in _total, a missing help text.
case_promtool_accepts() {
	local out rc
	command -v promtool >/dev/null || { E2E_WHY="promtool is not installed (prometheus)"; return 1; }
	out=$(scrape) || { E2E_WHY="the scrape failed"; return 1; }
	out=$(promtool check metrics <<<"$out" 2>&1)
	rc=$?
	e2e_expect "promtool check metrics: exit (output: ${out//$'\n'/ })" 0 "$rc" &&
		e2e_expect "promtool check metrics: output" "" "$out"
}

# The model's structure: the python prints nothing when it is right, else the problems.
case_dashboard_model() {
	local problems
	problems=$("$XBD_PY" - "$DASHBOARD" <(manpage_families | sed 's/[{ ].*//') <<'EOF' 2>&1
import json, re, sys
d = json.load(open(sys.argv[1]))
documented = set(open(sys.argv[2]).read().split())
bad = []
ds = [v for v in d.get("templating", {}).get("list", []) if v.get("type") == "datasource"]
if len(ds) != 1 or ds[0].get("query") != "prometheus" or ds[0].get("name") != "datasource":
    bad.append("no one datasource variable 'datasource' of type prometheus")
want = {"type": "prometheus", "uid": "${datasource}"}
for key in ("title", "uid", "schemaVersion", "panels"):
    if key not in d:
        bad.append(f"no {key}")
if d.get("id") is not None:
    bad.append("id is set: an import must get its own")
def walk(panels):
    for p in panels:
        yield p
        yield from walk(p.get("panels", []))
panels = list(walk(d.get("panels", [])))
ids = [p.get("id") for p in panels]
if len(set(ids)) != len(ids) or None in ids:
    bad.append(f"panel ids not unique: {ids}")
for p in panels:
    t = p.get("title", "?")
    if not {"h", "w", "x", "y"} <= set(p.get("gridPos", {})):
        bad.append(f"{t}: no gridPos")
    if p.get("type") == "row":
        continue
    if p.get("datasource") != want:
        bad.append(f"{t}: datasource {p.get('datasource')}")
    refs = [q.get("refId") for q in p.get("targets", [])]
    if not refs or len(set(refs)) != len(refs):
        bad.append(f"{t}: refIds {refs}")
    for q in p.get("targets", []):
        if q.get("datasource") != want or not q.get("expr"):
            bad.append(f"{t}/{q.get('refId')}: no expr or datasource {q.get('datasource')}")
        for name in re.findall(r"\bxdpban_[a-z_]+", q.get("expr", "")):
            if name not in documented:
                bad.append(f"{t}/{q.get('refId')}: {name} is not a documented metric")
print("; ".join(bad))
EOF
	)
	e2e_expect "problems of $DASHBOARD" "" "$problems"
}

case_prometheus_scrapes() {
	local health
	health=$(in_ns curl -sf --max-time 5 "http://$PROM/api/v1/targets" |
		xbd_json "' '.join(t['labels']['instance'] + '=' + t['health'] for t in d['data']['activeTargets'])")
	e2e_expect "Prometheus's targets" "$METRICS=up" "$health" &&
		e2e_expect "drop_banned Prometheus scraped" 6 "$(prom_value 'xdpban_packets_total{reason="drop_banned"}')" &&
		e2e_expect "drop_deny Prometheus scraped" 2 "$(prom_value 'xdpban_packets_total{reason="drop_deny"}')" &&
		e2e_expect "errors Prometheus scraped" 5 "$(prom_value xdpban_errors_total)" &&
		e2e_expect "suspect errors Prometheus scraped" 1 "$(prom_value xdpban_errors_suspect_total)" &&
		e2e_expect "bans Prometheus scraped" 1 "$(prom_value xdpban_bans_created_total)" &&
		e2e_expect "class malformed Prometheus scraped" 6 \
			"$(prom_value 'xdpban_class_errors_total{class="malformed"}')"
}

# The variable's label_values(METRIC, LABEL), asked the way Grafana asks it.
case_instance_variable() {
	local query metric label values
	query=$(xbd_json "[v for v in d['templating']['list'] if v['name'] == 'instance'][0]['query']['query']" <"$DASHBOARD")
	if [[ ! $query =~ ^label_values\(([a-z_]+),\ *([a-z_]+)\)$ ]]; then
		E2E_WHY="the instance variable's query '$query' is not label_values(METRIC, LABEL)"
		return 1
	fi
	metric=${BASH_REMATCH[1]} label=${BASH_REMATCH[2]}
	values=$(in_ns curl -sf --max-time 5 -G "http://$PROM/api/v1/label/$label/values" \
		--data-urlencode "match[]=$metric" | xbd_json "' '.join(d['data'])")
	e2e_expect "values of the instance variable" "$METRICS" "$values"
}

# panel_targets: "TITLE<TAB>REFID<TAB>EXPR" of every query of the dashboard, variables substituted
# (the instance as Grafana writes a multi-value variable's value into a regex: escaped for the
# regex, then for PromQL's string).
panel_targets() {
	"$XBD_PY" - "$DASHBOARD" "$METRICS" "$RATE_INTERVAL" <<'EOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
subst = {"instance": re.escape(sys.argv[2]).replace("\\", "\\\\"), "__rate_interval": sys.argv[3]}
def walk(panels):
    for p in panels:
        yield p
        yield from walk(p.get("panels", []))
for p in walk(d["panels"]):
    for q in p.get("targets", []):
        expr = re.sub(r"\$\{?(\w+)\}?", lambda m: subst.get(m.group(1), m.group(0)), q["expr"])
        print(p["title"], q["refId"], " ".join(expr.split()), sep="\t")
EOF
}

# check_series WANT RESULT: each LABEL=VALUE:CHECK of WANT against the "LABELS VALUE" lines of
# a query's result; the problems go into the caller's array $bad, prefixed with $where.
check_series() {
	local want label check value line
	for want in $1; do
		label=${want%:*} check=${want##*:}
		if [[ $label == instance=* ]]; then
			line=$(grep -E "(^|,)$label( |,)" <<<"$2")
		else
			line=$(grep -E "(^|,)$label( |,)" <<<"$2" | grep -F "instance=$METRICS")
		fi
		if [[ $(grep -c . <<<"$line") != 1 ]]; then
			bad+=("$where: no one series with $label in '${2//$'\n'/; }'")
			continue
		fi
		value=${line##* }
		case $check in
		any) ;;
		'>0') awk -v v="$value" 'BEGIN { exit !(v > 0) }' || bad+=("$where: $label is $value, not above 0") ;;
		=*) awk -v v="$value" -v w="${check#=}" 'BEGIN { exit !(v == w) }' ||
			bad+=("$where: $label is $value, not ${check#=}") ;;
		esac
	done
}

case_panel_queries() {
	local title ref expr out where i results bad=() keys=() exprs=()
	local -A seen=()
	while IFS=$'\t' read -r title ref expr; do
		keys+=("$title|$ref") exprs+=("$expr")
		seen["$title|$ref"]=1
	done < <(panel_targets)
	results=$(prom_queries "${exprs[@]}")
	for i in "${!keys[@]}"; do
		where=${keys[i]/|//} expr=${exprs[i]}
		out=$(sed -n "s/^$i\t//p" <<<"$results")
		if [[ $expr == *'$'* ]]; then
			bad+=("$where: a variable left in '$expr'")
		elif [[ $out == error:* ]]; then
			bad+=("$where: $out")
		elif [[ -z $out ]]; then
			bad+=("$where: no data for '$expr'")
		elif [[ -z ${EXPECT["${keys[i]}"]:-} ]]; then
			bad+=("$where: the test expects nothing of it (add it to EXPECT)")
		else
			check_series "${EXPECT["${keys[i]}"]}" "$out"
			echo "#   $where: ${out//$'\n'/; }"
		fi
	done
	local key
	for key in "${!EXPECT[@]}"; do
		[[ -n ${seen["$key"]:-} ]] || bad+=("$key: expected, but no such query in the dashboard")
	done
	if ((${#keys[@]} == 0 || ${#bad[@]})); then
		E2E_WHY="${#keys[@]} queries, ${#bad[@]} wrong: ${bad[*]:0:4}"
		return 1
	fi
}

case_table_fill_matches_maps() {
	local live_bans counters_max bans_max
	live_bans=$("$XBD_PY" tests/tools/xb_maps.py live "$XBD_PIN" bans) || return 1
	read -r counters_max bans_max <<<"$(xbd_cli status --json | xbd_json "f'{d[\"counters_max\"]} {d[\"bans_max\"]}'")"
	e2e_expect "xdpban_ban_table_used against the live bans in the pinned table" "$live_bans" \
		"$(prom_value xdpban_ban_table_used)" &&
		e2e_expect "xdpban_ban_table_capacity against status's bans_max" "$bans_max" \
			"$(prom_value xdpban_ban_table_capacity)" &&
		e2e_expect "xdpban_tracking_table_capacity against status's counters_max" "$counters_max" \
			"$(prom_value xdpban_tracking_table_capacity)" &&
		e2e_expect "xdpban_tracking_table_used (the banned source's and the suspect's counters)" 2 \
			"$(prom_value xdpban_tracking_table_used)"
}

# --- run -----------------------------------------------------------------------------------------

# setup: xdpband with its metrics on 127.0.0.1:9433 in the receiver namespace, prometheus there
# scraping it once a second, a first scrape before any traffic (rates need the zero it sees),
# the manual bans, the traffic, and Prometheus holding its last effects. [fleet] names a Redis
# that is not there (no host has 192.0.2.99 in the namespace), so that the fleet's metrics,
# exported only with [fleet], are scraped and checked against the man page too.
setup() {
	head -c 48 /dev/urandom | base64 >"$XBD_TMP/fleet.key" && chmod 600 "$XBD_TMP/fleet.key" ||
		return 1
	xbd_write_conf "[metrics]" "listen = $METRICS" "[fleet]" "redis = 192.0.2.99:6379" \
		"key-file = $XBD_TMP/fleet.key"
	xbd_start || { E2E_WHY="xdpband did not start: $(tail -n 1 "$XBD_LOG")"; return 1; }
	mkdir -p "$XBD_TMP/prometheus/data" || return 1
	cat >"$XBD_TMP/prometheus/prometheus.yml" <<EOF
# written by $(basename "$0")
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: xdpband
    static_configs:
      - targets: ['$METRICS']
EOF
	e2e_bg "$XBD_NS_R" "$XBD_TMP/prometheus/log" prometheus \
		--config.file="$XBD_TMP/prometheus/prometheus.yml" \
		--storage.tsdb.path="$XBD_TMP/prometheus/data" --web.listen-address="$PROM" \
		--storage.tsdb.retention.time=1h
	if ! xbd_wait_until prom_value_is "up{instance=\"$METRICS\"}" 1; then
		E2E_WHY="prometheus did not scrape xdpband in 20 s: $(tail -n 2 "$XBD_TMP/prometheus/log" | tr '\n' ' ')"
		return 1
	fi
	e2e_run xbd_cli ban "$MANUAL4" --for 1h && e2e_run xbd_cli ban "$PREFIX4" --for 1h || return 1
	if ! send_traffic; then
		E2E_WHY="scapy: $(tail -n 1 "$XBD_TMP/scapy.err")"
		return 1
	fi
	# the last frames sent are the denied ones, and the suspect error comes before them
	if ! xbd_wait_until prom_value_is 'xdpban_packets_total{reason="drop_deny"}' 2; then
		E2E_WHY="Prometheus did not see the 2 denied datagrams in 20 s: drop_deny $(prom_value 'xdpban_packets_total{reason="drop_deny"}')"
		return 1
	fi
}

started=$(date +%s%N)
xbd_begin pm "${CASES[@]}"
if ! setup; then
	xbd_fail_all "setup: ${E2E_WHY:-the namespaces or addresses}" "${CASES[@]}"
fi
for c in "${CASES[@]}"; do
	e2e_case "$c" "case_$c"
done
if ((E2E_FAILED)); then
	tail -n 5 "$XBD_TMP/prometheus/log" | sed 's/^/#   prometheus: /'
fi
echo "#   e2e_prometheus ran for $((($(date +%s%N) - started) / 1000000)) ms"
e2e_finish
