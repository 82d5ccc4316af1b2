"""Writes this folder's corpus: malformed or extreme scenario files, every one of which quench
must refuse with one line naming the problem (tests/test_output_safety.py runs them all).

Each file that TOML can read starts with `# expect: <start of the message>`, usually the key at
fault; the others (not UTF-8, not TOML) have a NAME.expect sidecar holding the start of the
message after the file's name, e.g. `line 3, column 7: not valid TOML`.
Run `python tests/corpus/python/generate.py` to rewrite the files after changing this script.
"""

import sys
from pathlib import Path

out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent

HEAD = 'duration = "1s"\n'
NODES = 'hosts = ["a", "b"]\nrouters = ["r"]\n'
LINKS = (
    '[[links]]\nfrom = "a"\nto = "r"\nrate = "10Mbps"\ndelay = "1ms"\n'
    '[[links]]\nfrom = "r"\nto = "b"\nrate = "1Mbps"\ndelay = "10ms"\n'
)
FLOW = '[[flows]]\nkind = "tcp"\nsrc = "a"\ndst = "b"\n'


def scen(nodes=NODES, links=LINKS, flows=FLOW, head=HEAD, tail=""):
    return head + nodes + links + flows + tail


def named(hosts, routers='["r"]', a=None, extra=""):
    """Hosts `hosts` (TOML array text); the first host, `a`, is linked to r and sends to b."""
    a = a if a is not None else hosts.split(",")[0].strip("[ ")
    return (
        HEAD + f"hosts = {hosts}\nrouters = {routers}\n"
        f'[[links]]\nfrom = {a}\nto = "r"\nrate = "10Mbps"\ndelay = "1ms"\n'
        '[[links]]\nfrom = "r"\nto = "b"\nrate = "1Mbps"\ndelay = "10ms"\n'
        f'[[flows]]\nkind = "tcp"\nsrc = {a}\ndst = "b"\n' + extra
    )


files: dict[str, bytes | str] = {}


def toml(name, expect, text):
    files[name + ".toml"] = f"# expect: {expect}\n" + text


def raw(name, expect, data):
    files[name + ".toml"] = data
    files[name + ".expect"] = expect + "\n"


# --- node names that would become file names ---------------------------------------------
toml("name_escaping_pcap", "hosts[0]", named('["../../escaped", "b"]', extra='[record]\npcap = ["../../escaped->r"]\n'))
toml("name_absolute", "hosts[0]", named('["/tmp/quench-abs", "b"]', extra='[record]\npcap = ["/tmp/quench-abs->r"]\n'))
toml("name_slash", "hosts[2]", named('["a", "b", "x/y"]'))
toml("name_backslash", "hosts[0]", named('["a\\\\b", "b"]'))
toml("name_300_chars", "hosts[0]", named(f'["{"h" * 300}", "b"]', extra=f'[record]\npcap = ["{"h" * 300}->r"]\n'))
toml("name_65_chars", "hosts[0]", named(f'["{"h" * 65}", "b"]'))
toml("name_empty", "hosts[0]", named('["", "b"]'))
toml("name_dot", "routers[0]", named('["a", "b"]', routers='["."]'))
toml("name_dotdot", "routers[0]", named('["a", "b"]', routers='[".."]'))
toml("name_hidden", "hosts[0]", named('[".hidden", "b"]'))
toml("name_leading_dash", "hosts[0]", named('["-rf", "b"]'))
toml("name_space", "hosts[0]", named('["a b", "b"]'))
toml("name_newline", "hosts[0]", named('["a\\nb", "b"]'))
toml("name_nul", "hosts[0]", named('["a\\u0000b", "b"]'))
toml("name_escape_sequence", "hosts[0]", named('["a\\u001b[31mred", "b"]'))
toml("name_arrow", "hosts[0]", named('["a->b", "b"]'))
toml("name_non_ascii", "hosts[0]", named('["caf\u00e9", "b"]'))
toml("name_zero_width", "hosts[0]", named('["a\\u200bb", "b"]'))
toml("name_tilde", "hosts[0]", named('["~root", "b"]'))
toml("name_shell_variable", "hosts[0]", named('["$HOME", "b"]'))
toml("name_glob", "hosts[0]", named('["*", "b"]'))
toml("name_drive_colon", "hosts[0]", named('["c:", "b"]'))
toml("name_declared_twice", "hosts[1]", named('["a", "a", "b"]'))
toml("name_router_same_as_host", "routers[0]", named('["a", "b", "r"]'))
toml("name_not_a_string", "hosts[0]", named('[1, "b"]', a='"b"'))
toml("hosts_not_a_list", "hosts", named('"a"', a='"a"'))
toml("hosts_a_table", "hosts", scen(nodes='hosts = {a = 1}\nrouters = ["r"]\n'))
toml(
    "name_last_of_ten_thousand",
    "hosts[10002]",
    named("[" + ", ".join(f'"n{i}"' for i in range(10000)) + ', "a", "b", "bad/name"]', a='"a"'),
)
toml("pcap_unknown_link", "record.pcap[0]", scen(tail='[record]\npcap = ["x->y"]\n'))
toml("pcap_path_as_link", "record.pcap[0]", scen(tail='[record]\npcap = ["../../a->r"]\n'))
toml("pcap_long_link", "record.pcap[0]", scen(tail=f'[record]\npcap = ["{"x" * 5000}->r"]\n'))
toml("record_links_unknown", "record.links[0]", scen(tail='[record]\nlinks = ["r->a->b"]\n'))

# --- depth and plain data --------------------------------------------------------------------
toml("deep_dotted_key", "a.a.a.a.a.a.a.a", scen(head=HEAD + "a" + ".a" * 4999 + " = 1\n"))
toml("deep_arrays_40", "hosts[0][0][0]", scen(nodes="hosts = " + "[" * 40 + '"a"' + "]" * 40 + '\nrouters = ["r"]\n'))
raw(
    "deep_arrays_5000",
    "not valid TOML: arrays or tables nested too deeply",
    scen() + "x = " + "[" * 5000 + "]" * 5000 + "\n",
)
raw(
    "deep_inline_tables_5000",
    "not valid TOML: arrays or tables nested too deeply",
    scen() + "x = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n",
)
toml("duration_nan", "duration", scen(head="duration = nan\n"))
toml("duration_inf", "duration", scen(head="duration = inf\n"))
toml("duration_date", "duration", scen(head="duration = 1979-05-27\n"))
toml("duration_time_of_day", "duration", scen(head="duration = 07:32:00\n"))
toml("duration_bool", "duration", scen(head="duration = true\n"))
toml("duration_negative", "duration", scen(head='duration = "-1s"\n'))
toml("duration_zero", "duration", scen(head='duration = "0s"\n'))
toml("duration_empty_string", "duration", scen(head='duration = ""\n'))
toml("seed_negative", "seed", scen(head=HEAD + "seed = -1\n"))
toml("seed_beyond_64_bits", "seed", scen(head=HEAD + "seed = 99999999999999999999999999999999\n"))
toml("seed_float", "seed", scen(head=HEAD + "seed = 1.5\n"))
toml(
    "loss_nan_inside_link",
    "links[0].loss",
    scen(links=LINKS.replace('delay = "1ms"\n', 'delay = "1ms"\nloss = nan\n', 1)),
)
toml("unknown_top_level_key", "durration", scen(head='duration = "1s"\ndurration = "1s"\n'))
toml("only_a_comment", "missing field `duration`", "")


# --- values ----------------------------------------------------------------------------------
def link0(key_value):
    return scen(links=LINKS.replace('delay = "1ms"\n', f'delay = "1ms"\n{key_value}\n', 1))


def link0_rate(value):
    return scen(links=LINKS.replace('rate = "10Mbps"', f"rate = {value}", 1))


toml("rate_zero", "links[0].rate", link0_rate('"0bps"'))
toml("rate_negative", "links[0].rate", link0_rate('"-5Mbps"'))
toml("rate_overflow", "links[0].rate", link0_rate('"1e400bps"'))
toml("rate_empty", "links[0].rate", link0_rate('""'))
toml("rate_a_table", "links[0].rate", link0_rate("{ bits = 1 }"))
toml("delay_unit_typo", "links[0].delay", scen(links=LINKS.replace('delay = "1ms"', 'delay = "5 msec"', 1)))
toml("mtu_zero", "links[0].mtu", link0("mtu = 0"))
toml("loss_above_one", "links[0].loss", link0("loss = 2.0"))
toml("link_to_unknown_node", "links[0].to", scen(links=LINKS.replace('to = "r"', 'to = "nowhere"', 1)))
toml("link_unknown_key", "links[0]", link0('rat = "1Mbps"'))
toml(
    "link_declared_twice",
    "links[2]",
    scen(links=LINKS + '[[links]]\nfrom = "a"\nto = "r"\nrate = "1Mbps"\ndelay = "1ms"\n'),
)
toml("links_not_a_list", "links", scen(links='links = "a->r"\n'))
toml("qdisc_unknown_kind", "links[1].qdisc", scen(links=LINKS + '[links.qdisc]\nkind = "fifo-ish"\n'))
toml("qdisc_limit_zero", "links[1].qdisc.limit", scen(links=LINKS + '[links.qdisc]\nkind = "droptail"\nlimit = "0p"\n'))
toml("flow_src_unknown", "flows[0].src", scen(flows=FLOW.replace('src = "a"', 'src = "nowhere"')))
toml("flow_src_router", "flows[0].src", scen(flows=FLOW.replace('src = "a"', 'src = "r"')))
toml("flow_to_itself", "flows[0].dst", scen(flows=FLOW.replace('dst = "b"', 'dst = "a"')))
toml("flow_unknown_kind", "flows[0]", scen(flows=FLOW.replace('kind = "tcp"', 'kind = "carrier-pigeon"')))
toml("flow_starts_after_end", "flows[0].start", scen(flows=FLOW + 'start = "2s"\n'))
toml("flows_not_tables", "flows[0]", scen(head=HEAD + "flows = [1]\n", flows=""))
toml("tcp_mss_zero", "flows[0].tcp.mss", scen(flows=FLOW + "[flows.tcp]\nmss = 0\n"))
toml("tcp_rto_k_zero", "flows[0].tcp.rto.k", scen(flows=FLOW + "[flows.tcp.rto]\nk = 0\n"))
toml("cc_fast_without_alpha", "flows[0].cc.alpha", scen(flows=FLOW + 'cc = "fast"\n'))
toml(
    "flow_name_200k_chars_and_bad_rate",
    "links[0].rate",
    link0_rate('"0bps"').replace(FLOW, FLOW + f'name = "{"f" * 200_000}"\n'),
)
toml(
    "workload_zero_rate",
    "workloads[0].arrival_rate",
    scen(tail='[[workloads]]\npairs = [["a", "b"]]\narrival_rate = 0\nsize = "10KB"\nflow = { kind = "tcp" }\n'),
)
toml(
    "workload_unknown_node",
    "workloads[0].pairs[0][1]",
    scen(tail='[[workloads]]\npairs = [["a", "../x"]]\narrival_rate = 5\nsize = "10KB"\nflow = { kind = "tcp" }\n'),
)
toml("cwnd_interval_word", "record.cwnd_interval", scen(tail='[record]\ncwnd_interval = "soon"\n'))
toml("crlf_line_endings", "links[0].rate", link0_rate('"0bps"').replace("\n", "\r\n"))

# --- files that are not UTF-8 or not TOML (sidecar .expect) ----------------------------------
raw("empty", "missing field `duration`", b"")
raw(
    "invalid_utf8",
    "line 3, column 11: not UTF-8 text",
    b'duration = "1s"\nrouters = ["r"]\nhosts = ["\xff\xfe"]\n',
)
raw("latin1_comment", "line 1, column 6: not UTF-8 text", "# caf\u00e9 au lait\n".encode("latin-1") + scen().encode())
raw("utf16_file", "line 1, column 1: not UTF-8 text", scen().encode("utf-16"))
raw("truncated_multibyte", "line 18, column 2: not UTF-8 text", scen().encode() + b"#\xe2\x82")
raw("png_header", "line 1, column 1: not UTF-8 text", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
raw("nul_byte", "line 1, column 12: not valid TOML", b'duration = \x00"1s"\n' + scen().encode())
raw("unclosed_string", "line 1, column 15: not valid TOML", 'duration = "1s\nhosts = ["a"]\n')
raw("duplicate_key", "line 2, column 16: not valid TOML", 'duration = "1s"\nduration = "2s"\n')
raw("missing_value", "line 1, column 12: not valid TOML", "duration = \n")
raw("table_redefined", "line 3, column 8: not valid TOML", 'links = 1\nduration = "1s"\n[[links]]\nfrom = "a"\n')
raw("bom_then_garbage", "line 1, column 1: not valid TOML", "\ufeff== not toml ==\n".encode())
raw("control_character", "line 1, column 6: not valid TOML", b'x = "\x07"\n')

for name, content in sorted(files.items()):
    data = content.encode() if isinstance(content, str) else content
    (out / name).write_bytes(data)
print(sum(1 for n in files if n.endswith(".toml")), "scenario files")
