#!/usr/bin/env python3
"""docs.py -- keeps the reference pages in docs/ true to the binary.

  docs.py write           regenerate the generated sections of docs/*.md
  docs.py check           fail (naming page, line, difference) when a
                          generated section differs from what the binary
                          says now, or docs/rest.md names a route the
                          server does not match, or misses one it does,
                          or docs/runtimes.md's key tables differ from the
                          keys each runtime's check accepts, or
                          docs/configuration.md misses an environment
                          variable or an option of huddle serve
  docs.py run PAGE...     run every ```console block of PAGE and compare
                          what each command prints with what the page shows

Environment: HUDDLE_DOCS_DIR (default the repository's docs/), HUDDLE (the
binary; default build/huddle), HUDDLE_DOCS_DUMP (tests/tools/docs-dump.c:
the operation table and the routes as JSON; default
build/tests/hd_docs_dump); for `run`, HUDDLE_HOME (a
fresh home), DOCS_PORT (where `huddle serve` listens for this page; pages
write 127.0.0.1:7340) and PATH with `huddle` on it. Caller:
tests/e2e/test-docs.sh.

Generated sections sit between `<!-- generated: NAME -->` and
`<!-- end generated: NAME -->`: cli-help (every command's and subcommand's
--help), mcp-tools (the real tools/list of `huddle mcp`: arguments, types,
limits, required; who may call it from the operation table) and
rest-ops (the operation table's routes: path, query and body fields).

A console block is a shell session: `$ COMMAND` (continued by a trailing
backslash, or by a heredoc's lines up to its end word), then what it
prints, stdout and stderr as a terminal shows them. A command is run by
bash from the repository's top directory with the variables the page's
earlier commands exported; it must exit 0, or the N of a trailing
`# exit N`. The shown output is compared:
  - when it is JSON (one or more values), structurally with the actual
    JSON: an object with the key "…" may have more keys, a list ending in
    "…" more items, the string "…" is any value and "…" inside a string
    any text; a time in milliseconds since the epoch (13 digits), a UUID
    or an ISO-8601 time matches any other;
  - a last line of three digits is the HTTP status (curl -w
    '\n%{http_code}\n'), compared exactly, the rest as above;
  - otherwise line by line: "…" in a line is any text, a line "..." any
    number of lines; times (ISO-8601, or local "YYYY-MM-DD HH:MM:SS"),
    UUIDs and sig= signatures are compared as placeholders.
In what a command prints, the server's real port reads as 7340 and the
home as /home/u/.huddle, as the pages write them.
"""
import difflib
import json
import os
import re
import subprocess
import sys

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.environ.get("HUDDLE_DOCS_DIR") or os.path.join(SRC, "docs")
PAGES = ["cli.md", "mcp.md", "rest.md", "configuration.md", "runtimes.md"]
# what `docs.py write` uses when the environment names no build
os.environ.setdefault("HUDDLE", os.path.join(SRC, "build", "huddle"))
os.environ.setdefault("HUDDLE_DOCS_DUMP", os.path.join(SRC, "build", "tests", "hd_docs_dump"))
SHOWN_PORT = "7340"
SHOWN_HOME = "/home/u/.huddle"


def huddle(*args, stdin=None):
    p = subprocess.run([os.environ["HUDDLE"], *args], input=stdin,
                       capture_output=True, text=True,
                       env=dict(os.environ, HUDDLE_LOG="warn"))
    return p.stdout


def dump():
    return json.loads(subprocess.run([os.environ["HUDDLE_DOCS_DUMP"]],
                                     capture_output=True, text=True,
                                     check=True).stdout)


# ---- generated sections ---------------------------------------------------

def help_names(text, heading):
    """The names listed under `heading:` in a --help text."""
    names, inside = [], False
    for line in text.splitlines():
        if line.strip() == heading + ":":
            inside = True
            continue
        if inside:
            m = re.match(r"  (\S+)\s", line)
            if not m:
                break
            names.append(m.group(1))
    return names


def gen_cli_help():
    out = []
    top = huddle("--help")
    out += ["### huddle", "", "```text", top.rstrip(), "```", ""]
    for cmd in help_names(top, "commands"):
        text = huddle(cmd, "--help")
        out += ["### huddle " + cmd, "", "```text", text.rstrip(), "```", ""]
        for sub in help_names(text, "subcommands"):
            out += ["#### huddle %s %s" % (cmd, sub), "", "```text",
                    huddle(cmd, sub, "--help").rstrip(), "```", ""]
    return out


def cell(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def limits(schema):
    parts = []
    if "minimum" in schema and "maximum" in schema:
        parts.append("%d-%d" % (schema["minimum"], schema["maximum"]))
    elif "minimum" in schema:
        parts.append("at least %d" % schema["minimum"])
    elif "maximum" in schema:
        parts.append("at most %d" % schema["maximum"])
    if "maxLength" in schema:
        parts.append("at most %d bytes" % schema["maxLength"])
    if "maxItems" in schema:
        parts.append("at most %d items" % schema["maxItems"])
    if "enum" in schema:
        parts.append("one of " + ", ".join("`%s`" % v for v in schema["enum"]))
    return "; ".join(parts)


def schema_type(schema):
    t = schema.get("type", "any")
    if isinstance(t, list):
        t = " or ".join(t)
    if t == "array":
        t = "array of " + schema.get("items", {}).get("type", "any")
    return t


WHO = {"anyone": "anyone", "member": "a member of the team, or the user",
       "agent": "an agent acting as itself", "leader": "the team's leader, or the user"}


def gen_mcp_tools():
    listing = huddle("mcp", stdin=json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}) + "\n")
    tools = json.loads(listing)["result"]["tools"]
    ops = {o["mcp"]: o for o in dump()["ops"] if o["mcp"]}
    out = []
    for t in tools:
        op = ops.get(t["name"])
        out += ["### " + t["name"], "", t["description"], ""]
        if op:
            out += ["Who: %s. %s" % (WHO[op["who"]], "Writes (refused on a read-only connection)."
                                     if op["write"] else "Reads only."), ""]
        props = t["inputSchema"].get("properties", {})
        req = set(t["inputSchema"].get("required", []))
        if not props:
            out += ["No arguments.", ""]
            continue
        out += ["| argument | type | required | limits | meaning |", "|---|---|---|---|---|"]
        for name, s in props.items():
            out.append("| `%s` | %s | %s | %s | %s |" % (
                name, schema_type(s), "yes" if name in req else "no",
                cell(limits(s)), cell(s.get("description", ""))))
        out.append("")
    return out


def arg_limits(a):
    parts = []
    if a["type"] == "integer" and a["min"] < a["max"]:
        parts.append("%d-%d" % (a["min"], a["max"]))
    elif a["id"]:
        parts.append("a positive id")
    if a["type"] == "string" and a["max"] > 0:
        parts.append("at most %d bytes" % a["max"])
    if a["type"] in ("integer list", "string list") and a["max"] > 0:
        parts.append("at most %d items" % a["max"])
    if a["values"]:
        parts.append("one of " + ", ".join("`%s`" % v for v in a["values"]))
    return "; ".join(parts)


def gen_rest_ops():
    out = []
    for op in dump()["ops"]:
        if not op["method"]:
            continue
        out += ["### %s %s" % (op["method"], op["path"]), ""]
        who = WHO[op["who"]]
        if op["who"] != "anyone":
            who += " (named by `%s`, or the agent the request proves)" % op["rest_as"]
        out += ["Operation `%s`%s; answers %d on success. Who: %s." % (
            op["name"], " (MCP `%s`)" % op["mcp"] if op["mcp"] else "",
            op["status"], who), ""]
        rows = []
        where = "query" if op["method"] == "GET" else "body"
        keys = set()
        for a in op["args"]:
            if a["rest"] == "":
                continue
            if a["rest"].startswith(":"):
                key, place = a["rest"][1:], "path"
            else:
                key, place = a["rest"], where
            keys.add(key)
            meaning = a["desc"] or a["cli_help"] or (
                "the %s's id" % key if place == "path" else "")
            rows.append("| `%s` | %s | %s | %s | %s | %s |" % (
                key, place, a["type"], "yes" if a["required"] else "no",
                cell(arg_limits(a)), cell(meaning)))
        if op["one_of"]:
            out += ["Exactly one of `%s` and `%s`." % tuple(op["one_of"]), ""]
        if rows:
            out += ["| field | in | type | required | limits | meaning |",
                    "|---|---|---|---|---|---|"] + rows + [""]
        shared = ["`%s` (%s)" % (a["rest"], a["type"]) for a in op["rest_common"]
                  if a["rest"] and a["rest"] not in keys]
        if shared:
            out += ["Also accepted: the fields every task action shares (`as` or `agent` names who acts; see above): %s." %
                    ", ".join(shared), ""]
    return out


GENERATORS = {"cli-help": ("cli.md", gen_cli_help),
              "mcp-tools": ("mcp.md", gen_mcp_tools),
              "rest-ops": ("rest.md", gen_rest_ops)}


def section_span(lines, name):
    begin = end = None
    for i, l in enumerate(lines):
        if l.strip() == "<!-- generated: %s -->" % name:
            begin = i
        elif l.strip() == "<!-- end generated: %s -->" % name:
            end = i
    return begin, end


def generate(write):
    problems = []
    for name, (page, gen) in GENERATORS.items():
        path = os.path.join(DOCS, page)
        lines = open(path).read().split("\n")
        begin, end = section_span(lines, name)
        if begin is None or end is None or end < begin:
            problems.append("docs/%s: no generated section %s" % (page, name))
            continue
        want = ["<!-- generated: %s -->" % name,
                "<!-- by tests/e2e/docs.py write; test-docs.sh fails when it differs -->", ""]
        want += "\n".join(gen()).split("\n")
        have = lines[begin:end]
        if have == want:
            continue
        if write:
            lines[begin:end] = want
            open(path, "w").write("\n".join(lines))
            continue
        diff = difflib.unified_diff(have, want, "docs/%s as written" % page,
                                    "as the binary says", lineterm="", n=1)
        diff = list(diff)
        problems.append("docs/%s:%d: generated section %s differs from the binary "
                        "(run tests/e2e/docs.py write):\n%s" % (
                            page, begin + 1, name, "\n".join(diff[:60])))
    return problems


def route_headings(page):
    found = {}
    for n, l in enumerate(open(os.path.join(DOCS, page)).read().split("\n"), 1):
        m = re.match(r"#{3,4} (GET|POST|DELETE|PUT|PATCH) (/\S*)$", l)
        if m:
            found.setdefault((m.group(1), m.group(2)), n)
    return found


def check_routes():
    routes = {(r["method"], r["path"]) for r in dump()["routes"]}
    documented = route_headings("rest.md")
    problems = ["docs/rest.md: route %s %s exists but has no heading `### %s %s`" % (m, p, m, p)
                for m, p in sorted(routes - set(documented))]
    problems += ["docs/rest.md:%d: route %s %s is documented but the server has no such route" % (
        documented[k], k[0], k[1]) for k in sorted(set(documented) - routes)]
    return problems


def check_configuration():
    """docs/configuration.md names every environment variable huddle reads
    or sets (a getenv("X") or a "HUDDLE_X" in src/; CODEX_HOME is
    runtimes.md's) and every option of `huddle serve --help`."""
    page = open(os.path.join(DOCS, "configuration.md")).read()
    elsewhere = open(os.path.join(DOCS, "runtimes.md")).read()
    names = {}
    for root, _, files in os.walk(os.path.join(SRC, "src")):
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(root, f)
            text = open(path).read()
            for m in re.finditer(r'getenv\("([A-Z_]+)"\)|"(HUDDLE_[A-Z_]+)"', text):
                names.setdefault(m.group(1) or m.group(2), os.path.relpath(path, SRC))
    problems = ["docs/configuration.md: no word of %s (%s reads or sets it)" % (n, where)
                for n, where in sorted(names.items())
                if "`%s`" % n not in page and "`%s`" % n not in elsewhere]
    for opt in re.findall(r"^\s+(?:-\w, )?(--[a-z-]+)", huddle("serve", "--help"), re.M):
        if opt not in ("--home", "--json", "--help") and "`%s" % opt not in page:
            problems.append("docs/configuration.md: huddle serve takes %s; the page does not say" % opt)
    return problems


RUNTIME_SOURCES = {"scripted": "scripted.c", "exec": "exec.c",
                   "claude-code": "claude.c", "codex": "codex.c",
                   "native": "native.c", "hermes": "hermes.c",
                   "openclaw": "openclaw.c"}


def source_keys(runtime):
    """The runtime_config keys its check accepts: the keys[] of src/runtime/<file>."""
    text = open(os.path.join(SRC, "src", "runtime", RUNTIME_SOURCES[runtime])).read()
    m = re.search(r"\bkeys\[\]\s*=\s*\{([^}]*)\}", text)
    return re.findall(r'"([^"]+)"', m.group(1)) if m else []


def check_runtimes():
    """Every runtime has a section `## `NAME`` in docs/runtimes.md whose first
    table lists exactly the keys its check accepts."""
    lines = open(os.path.join(DOCS, "runtimes.md")).read().split("\n")
    sections, cur = {}, None
    for n, l in enumerate(lines, 1):
        m = re.match(r"## `([a-z-]+)`$", l)
        if m:
            cur = m.group(1)
            sections[cur] = (n, [])
        elif l.startswith("## "):
            cur = None
        elif cur:
            k = re.match(r"\| `([a-z_]+)` \|", l)
            if k:
                sections[cur][1].append(k.group(1))
    problems = []
    for rt in dump()["runtimes"]:
        if rt not in sections:
            problems.append("docs/runtimes.md: runtime %s has no section `## `%s``" % (rt, rt))
            continue
        if rt not in RUNTIME_SOURCES:
            problems.append("tests/e2e/docs.py: which file checks runtime %s's config?" % rt)
            continue
        line, documented = sections[rt]
        want = source_keys(rt)
        if not want:
            problems.append("src/runtime/%s: no keys[] found" % RUNTIME_SOURCES[rt])
        for k in want:
            if k not in documented:
                problems.append("docs/runtimes.md:%d: runtime %s takes runtime_config.%s; the page does not say" % (line, rt, k))
        for k in documented:
            if k not in want:
                problems.append("docs/runtimes.md:%d: runtime %s has no runtime_config.%s" % (line, rt, k))
    for rt in sections:
        if rt not in dump()["runtimes"]:
            problems.append("docs/runtimes.md:%d: no runtime %s in this build" % (sections[rt][0], rt))
    return problems


# ---- running the console blocks -------------------------------------------

ISO = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?Z?")
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
SIG = re.compile(r"sig=[0-9a-f]{64}")


def blocks(page):
    """(line of `$`, command, expected rc, expected lines) of every console block."""
    lines = open(page).read().split("\n")
    i, out = 0, []
    while i < len(lines):
        if lines[i].strip() != "```console":
            i += 1
            continue
        i += 1
        cur = None
        while i < len(lines) and lines[i].strip() != "```":
            l = lines[i]
            if l.startswith("$ "):
                start, cmd = i + 1, [l[2:]]
                while cmd[-1].endswith("\\") and i + 1 < len(lines):
                    i += 1
                    cmd.append(lines[i])
                m = re.search(r"<<-?\s*'?([A-Za-z_]+)'?", cmd[0])
                if m:
                    while i + 1 < len(lines) and lines[i + 1] != m.group(1):
                        i += 1
                        cmd.append(lines[i])
                    i += 1
                    cmd.append(m.group(1))
                text = "\n".join(cmd)
                rc = 0
                m = re.search(r"#\s*exit (\d+)\s*$", cmd[0])
                if m:
                    rc = int(m.group(1))
                cur = [start, text, rc, []]
                out.append(cur)
            elif cur is not None:
                cur[3].append(l)
            i += 1
        i += 1
    return out


def json_values(text):
    dec, vals, i = json.JSONDecoder(), [], 0
    text = text.strip()
    if not text or text[0] not in "{[":
        return None
    try:
        while i < len(text):
            v, i = dec.raw_decode(text, i)
            vals.append(v)
            while i < len(text) and text[i].isspace():
                i += 1
    except ValueError:
        return None
    return vals


def wild(pattern):
    return re.compile(".*".join(re.escape(p) for p in pattern.split("…")), re.S)


def jmatch(e, a, where):
    """None when actual a matches expected e, else what differs."""
    if e == "…":
        return None
    if isinstance(e, bool) or isinstance(a, bool) or e is None or a is None:
        return None if e is a or e == a and type(e) is type(a) else "%s: got %s, wanted %s" % (
            where, json.dumps(a), json.dumps(e))
    if isinstance(e, int) and isinstance(a, int):
        if 10**12 <= e < 10**14 and 10**12 <= a < 10**14:
            return None
    if isinstance(e, str) and isinstance(a, str):
        if e == a:
            return None
        if ISO.fullmatch(e) and ISO.fullmatch(a) or UUID.fullmatch(e) and UUID.fullmatch(a):
            return None
        if e[:1] in "{[" and a[:1] in "{[":
            ev, av = json_values(e), json_values(a)
            if ev is not None and av is not None and len(ev) == len(av) == 1:
                return jmatch(ev[0], av[0], where + " (as JSON)")
        norm = lambda s: SIG.sub("sig=<sig>", UUID.sub("<uuid>", ISO.sub("<time>", s)))
        if wild(norm(e)).fullmatch(norm(a)):
            return None
    if isinstance(e, dict) and isinstance(a, dict):
        for k in e:
            if k == "…":
                continue
            if k not in a:
                return "%s: no key %s" % (where, json.dumps(k))
            d = jmatch(e[k], a[k], "%s.%s" % (where, k))
            if d:
                return d
        extra = [k for k in a if k not in e]
        if extra and "…" not in e:
            return "%s: keys not shown: %s" % (where, ", ".join(extra))
        return None
    if isinstance(e, list) and isinstance(a, list):
        more = bool(e) and e[-1] == "…"
        items = e[:-1] if more else e
        if len(a) < len(items) or not more and len(a) != len(items):
            return "%s: %d items, wanted %s%d" % (where, len(a), "at least " if more else "", len(items))
        for n, x in enumerate(items):
            d = jmatch(x, a[n], "%s[%d]" % (where, n))
            if d:
                return d
        return None
    if e == a and type(e) is type(a):
        return None
    return "%s: got %s, wanted %s" % (where, json.dumps(a), json.dumps(e))


def text_match(expected, actual):
    norm = lambda s: SIG.sub("sig=<sig>", UUID.sub("<uuid>", ISO.sub("<time>", s)))
    parts = []
    for l in expected:
        if l == "...":
            parts.append("(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(re.escape(p) for p in norm(l).split("…")) + "\n")
    return re.fullmatch("".join(parts), norm(actual) + "\n", re.S) is not None


def compare(expected, actual):
    while expected and expected[-1] == "":
        expected = expected[:-1]
    actual = actual.rstrip("\n")
    if expected and re.fullmatch(r"\d{3}", expected[-1]):
        # curl -w '\n%{http_code}\n': the status on a line of its own
        body, _, status = actual.rpartition("\n")
        if status != expected[-1]:
            return "status %s, the page shows %s; the body:\n%s" % (status, expected[-1], body)
        expected, actual = expected[:-1], body
        if not expected and not actual.strip():
            return None
    if not expected:
        return None if not actual.strip() else "the page shows no output; the command printed:\n" + actual
    ev = json_values("\n".join(expected))
    if ev is not None:
        av = json_values(actual)
        if av is None:
            return "the page shows JSON; the command printed:\n" + actual
        if len(av) != len(ev):
            return "%d JSON values, the page shows %d:\n%s" % (len(av), len(ev), actual)
        for n, (e, a) in enumerate(zip(ev, av)):
            d = jmatch(e, a, "value %d" % (n + 1) if len(ev) > 1 else "$")
            if d:
                return d + "\nthe command printed:\n" + actual
        return None
    if text_match(expected, actual):
        return None
    return "\n".join(difflib.unified_diff(expected, actual.split("\n"), "as the page shows",
                                          "as printed", lineterm="", n=2))


def run_page(page, state):
    failures, count = [], 0
    name = os.path.relpath(page, SRC) if page.startswith(SRC + "/") else page
    port = os.environ["DOCS_PORT"]
    home = os.environ["HUDDLE_HOME"]
    for line, cmd, rc, expected in blocks(page):
        count += 1
        real = re.sub(r"(127\.0\.0\.1|localhost):" + SHOWN_PORT + r"\b",
                      lambda m: m.group(1) + ":" + port, cmd)
        script = 'set -a; . "%s"; set +a\n%s\n__rc=$?\nexport -p > "%s"\nexit $__rc\n' % (
            state, real, state)
        p = subprocess.run(["bash", "-c", script], cwd=SRC, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=300)
        out = p.stdout.replace("127.0.0.1:" + port, "127.0.0.1:" + SHOWN_PORT)
        out = out.replace(home, SHOWN_HOME)
        if p.returncode != rc:
            failures.append("%s:%d: `%s` exited %d, the page says %d; it printed:\n%s" % (
                name, line, cmd.split("\n")[0], p.returncode, rc, out))
            continue
        d = compare(expected, out)
        if d:
            failures.append("%s:%d: `%s` printed other than the page shows: %s" % (
                name, line, cmd.split("\n")[0], d))
    return count, failures


def main():
    if len(sys.argv) >= 2 and sys.argv[1] in ("write", "check"):
        problems = generate(sys.argv[1] == "write")
        if sys.argv[1] == "check":
            problems += check_routes() + check_runtimes() + check_configuration()
        for p in problems:
            print(p, file=sys.stderr)
        return 1 if problems else 0
    if len(sys.argv) >= 3 and sys.argv[1] == "run":
        state = os.path.join(os.environ.get("TMPDIR", "/tmp"), "docs-state-%d" % os.getpid())
        open(state, "w").write("export HUDDLE_HOME=%s\n" % json.dumps(os.environ["HUDDLE_HOME"]))
        total, bad = 0, []
        try:
            for page in sys.argv[2:]:
                n, f = run_page(page, state)
                total += n
                bad += f
        finally:
            os.unlink(state)
        for f in bad:
            print(f, file=sys.stderr)
        print("%d examples run, %d differ" % (total, len(bad)))
        return 1 if bad else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
