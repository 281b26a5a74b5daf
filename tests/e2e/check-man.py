#!/usr/bin/env python3
"""check-man.py -- man/huddle.1 against `huddle --help`, both ways.

    python3 tests/e2e/check-man.py HUDDLE_BINARY MAN_PAGE [SOURCE_DIR]

Walks `huddle --help`, then `huddle CMD --help` for every command and
`huddle CMD SUB --help` for every subcommand, collecting each command path,
its usage line and its options (short name, long name, metavariable). Reads
the man page's markup (see the comment at the top of man/huddle.1):

  .SS "huddle CMD [SUB] ARGS"       a command's section (ARGS: the usage
                                    line's, without [options])
  .TP                               an option of the section it is in;
  \\fB\\-s\\fR, \\fB\\-\\-long\\fR \\fIMETA\\fR  the tag line right after .TP

and the global options as the same .TP tags under .SH OPTIONS. --home,
--json and --help, which every command's --help repeats, are documented
once there.

Given the source tree too, every environment variable the sources read
(getenv("X")) or set for an agent (env_pair("X", ...)) must be named under
.SH ENVIRONMENT, and every exit code the CLI defines (#define ..._EXIT_...
N in src/cli) be a .TP tag under .SH "EXIT STATUS".

Fails (exit 1) naming every difference, with what to paste where: a
command or option --help has and the man page lacks, a command or option
the man page documents that --help does not know, a usage line or a
short name or metavariable that differs. Exit 0 and one line of counts
when they agree; exit 2 when the binary cannot be run.
"""
import re
import subprocess
import sys

OPT_LINE = re.compile(
    r"^  (?:-(\S), |    )--([a-z0-9][a-z0-9-]*)"
    r"(?: ([A-Z][^ ]*|[a-z]+(?:\|[a-z]+)+))?(?: +(.*))?$")


def die(msg):
    """What stops the check itself (not a difference): exit 2."""
    print("check-man: " + msg, file=sys.stderr)
    sys.exit(2)


def run_help(huddle, path):
    try:
        p = subprocess.run([huddle, *path, "--help"], capture_output=True,
                           text=True, timeout=30)
    except OSError as e:
        die("cannot run %s: %s" % (huddle, e))
    if p.returncode != 0:
        die("`huddle %s --help` exited %d: %s" %
            (" ".join(path), p.returncode, p.stderr.strip()))
    return p.stdout


def parse_help(text):
    """usage args (None for a command with subcommands), summary, options,
    subcommand names, command names (main help only)."""
    lines = text.split("\n")
    usage = lines[0]
    if not usage.startswith("usage: huddle"):
        die("unexpected help text: %r" % usage)
    summary, opts, subs, cmds, block = None, [], [], [], None
    for line in lines[1:]:
        if line in ("options:", "subcommands:", "commands:"):
            block = line[:-1]
            continue
        if line.strip() == "":
            block = None
            continue
        if block is None and summary is None:
            summary = line
        elif block == "options":
            m = OPT_LINE.match(line)
            if not m:
                die("cannot read this option line of `%s --help`: %r" %
                    (usage[len("usage: "):].split(" [")[0], line))
            opts.append({"short": m.group(1), "long": m.group(2),
                         "meta": m.group(3), "help": m.group(4) or ""})
        elif block == "subcommands":
            subs.append(line.split()[0])
        elif block == "commands":
            cmds.append(line.split()[0])
    return usage, summary, opts, subs, cmds


def walk(huddle):
    """{path: {"usage": args or None, "summary", "opts"}}, global options."""
    usage, summary, gopts, _, cmds = parse_help(run_help(huddle, []))
    found = {}

    def visit(path):
        usage, summary, opts, subs, _ = parse_help(run_help(huddle, path))
        args = None
        if not subs:
            args = usage[len("usage: huddle " + " ".join(path)):]
            args = args.replace(" [options]", "").strip()
        found[" ".join(path)] = {"args": args, "summary": summary,
                                 "opts": opts}
        for s in subs:
            visit(path + [s])

    for c in cmds:
        visit([c])
    return found, gopts


def unroff(s):
    s = re.sub(r"\\f(\[[^]]*\]|\(..|.)", "", s)
    s = s.replace("\\-", "-").replace("\\&", "").replace("\\%", "")
    return s.replace("\\e", "\\").replace("\\ ", " ").strip()


TAG = re.compile(r"^(?:-(\S), )?--([a-z0-9][a-z0-9-]*)(?: (\S+))?$")


def parse_man(path):
    """{cmd path: {"args", "line", "opts": {long: (short, meta, line)}}},
    global options, problems found reading it."""
    sections, gopts, problems = {}, {}, []
    sh, cur, after_tp = None, None, False
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for n, raw in enumerate(lines, 1):
        if raw.startswith(".SH"):
            sh = unroff(raw[3:]).strip('"')
            cur = None
            continue
        if raw.startswith(".SS") and sh == "COMMANDS":
            words = unroff(raw[3:]).strip('"').split()
            if not words or words[0] != "huddle":
                problems.append("%s:%d: a section of COMMANDS that is not "
                                "a command (\"huddle ...\"): %s" %
                                (path, n, raw))
                cur = None
                continue
            i = 1
            while i < len(words) and re.match(r"^[a-z][a-z0-9-]*$",
                                              words[i]):
                i += 1
            key = " ".join(words[1:i])
            if key in sections:
                problems.append("%s:%d: a second section for 'huddle %s' "
                                "(the first is at line %d)" %
                                (path, n, key, sections[key]["line"]))
            cur = sections[key] = {"args": " ".join(words[i:]), "line": n,
                                   "opts": {}}
            continue
        if raw.startswith(".TP"):
            after_tp = True
            continue
        if after_tp:
            after_tp = False
            tag = unroff(raw)
            if not tag.startswith("-"):
                continue
            where = gopts if sh == "OPTIONS" else (
                cur["opts"] if cur is not None else None)
            if where is None:
                continue
            m = TAG.match(tag)
            if not m:
                problems.append("%s:%d: an option tag not in the form "
                                "\\fB\\-s\\fR, \\fB\\-\\-long\\fR "
                                "\\fIMETA\\fR: %s" % (path, n, raw))
                continue
            where[m.group(2)] = (m.group(1), m.group(3), n)
    return sections, gopts, problems


def check_source(problems, man, src):
    """The environment variables and exit codes of the sources."""
    import glob
    env, codes = {}, {}
    for path in sorted(glob.glob(src + "/src/**/*.[ch]", recursive=True)):
        text = open(path, encoding="utf-8", errors="replace").read()
        rel = path[len(src) + 1:]
        for v in re.findall(r'(?:getenv|env_pair)\("([A-Z][A-Z0-9_]*)"',
                            text):
            env.setdefault(v, rel)
        if rel.startswith("src/cli/"):
            for name, n in re.findall(
                    r"#define\s+(\w*EXIT\w*)\s+(\d+)", text):
                codes.setdefault(n, "%s (%s)" % (name, rel))
    sections, sh, after_tp = {}, None, False
    for raw in open(man, encoding="utf-8").read().split("\n"):
        if raw.startswith(".SH"):
            sh = unroff(raw[3:]).strip('"')
            sections.setdefault(sh, {"text": "", "tags": set()})
            continue
        if sh is None:
            continue
        line = unroff(re.sub(r"^\.[A-Z]{1,2} ", "", raw)).replace('"', "")
        sections[sh]["text"] += " " + line
        if raw.startswith(".TP"):
            after_tp = True
        elif after_tp:
            after_tp = False
            sections[sh]["tags"].add(line.strip())
    words = set(re.findall(r"[A-Z][A-Z0-9_]+",
                           sections.get("ENVIRONMENT", {}).get("text", "")))
    for v, where in sorted(env.items()):
        if v not in words:
            problems.append(
                "environment variable %s (read or set in %s) is missing from "
                "%s; add under .SH ENVIRONMENT:\n.TP\n.B %s\nwhat it does" %
                (v, where, man, v))
    tags = sections.get("EXIT STATUS", {}).get("tags", set())
    for n, where in sorted(codes.items(), key=lambda kv: int(kv[0])):
        if n not in tags:
            problems.append(
                "exit code %s (%s) is missing from %s; add under .SH \"EXIT "
                "STATUS\":\n.TP\n.B %s\nwhen it happens" % (n, where, man, n))


def roff_opt(o):
    tag = ""
    if o["short"]:
        tag += "\\fB\\-%s\\fR, " % o["short"]
    tag += "\\fB\\-\\-%s\\fR" % o["long"].replace("-", "\\-")
    if o["meta"]:
        tag += " \\fI%s\\fR" % o["meta"]
    text = o["help"].replace("\\", "\\e")
    if text[:1] in (".", "'"):
        text = "\\&" + text
    return ".TP\n%s\n%s" % (tag, text)


def spelled(short, long, meta):
    return "%s--%s%s" % ("-%s, " % short if short else "", long,
                         " " + meta if meta else "")


def compare_opts(problems, man, where, what, hopts, mopts, skip):
    seen = set()
    for o in hopts:
        if o["long"] in skip:
            continue
        seen.add(o["long"])
        if o["long"] not in mopts:
            problems.append(
                "%s: option --%s (%s --help) is missing from %s; add under "
                "%s:\n%s" % (what, o["long"], what, man, where,
                             roff_opt(o)))
            continue
        short, meta, line = mopts[o["long"]]
        if (short, meta) != (o["short"], o["meta"]):
            problems.append(
                "%s:%d: %s: --help says '%s', the man page '%s'" %
                (man, line, what, spelled(o["short"], o["long"], o["meta"]),
                 spelled(short, o["long"], meta)))
    for name, (short, meta, line) in sorted(mopts.items(),
                                            key=lambda kv: kv[1][2]):
        if name not in seen:
            problems.append(
                "%s:%d: option --%s is documented for %s, but %s --help "
                "does not know it; remove it (or fix its name)" %
                (man, line, name, what, what))


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    huddle, man = sys.argv[1], sys.argv[2]
    helps, hglobal = walk(huddle)
    sections, mglobal, problems = parse_man(man)
    if len(sys.argv) == 4:
        check_source(problems, man, sys.argv[3])
    common = {o["long"] for o in hglobal}

    compare_opts(problems, man, ".SH OPTIONS", "huddle", hglobal, mglobal,
                 set())
    for path, h in helps.items():
        what = "huddle " + path
        if path not in sections:
            syn = what + (" " + h["args"] if h["args"] else "")
            body = "\n".join(roff_opt(o) for o in h["opts"]
                             if o["long"] not in common)
            problems.append(
                "%s: command '%s' (in `huddle%s --help`) is missing from "
                "%s; add under .SH COMMANDS:\n.SS \"%s\"\n%s%s" %
                (what, what, (" " + path.rsplit(" ", 1)[0])
                 if " " in path else "", man, syn, h["summary"] or "",
                 "\n" + body if body else ""))
            continue
        s = sections[path]
        if h["args"] is not None and s["args"] != h["args"]:
            problems.append(
                "%s:%d: the usage of '%s' is '%s' in --help, '%s' here; "
                "make it .SS \"%s %s\"" %
                (man, s["line"], what, h["args"], s["args"], what,
                 h["args"]))
        if h["args"] is None and s["args"]:
            problems.append(
                "%s:%d: '%s' has subcommands; its section is .SS \"%s\" "
                "(no arguments)" % (man, s["line"], what, what))
        compare_opts(problems, man, ".SS \"%s%s\" (line %d)" %
                     (what, " " + s["args"] if s["args"] else "", s["line"]),
                     what, h["opts"], s["opts"], common)
    for path, s in sorted(sections.items(), key=lambda kv: kv[1]["line"]):
        if path not in helps:
            problems.append(
                "%s:%d: .SS \"huddle %s\" documents a command `huddle "
                "--help` does not know (walked: every command and "
                "subcommand); remove it (or fix its name)" %
                (man, s["line"], path))
    if problems:
        for p in problems:
            print("check-man: " + p, file=sys.stderr)
        print("check-man: %d difference(s) found checking %s" %
              (len(problems), man), file=sys.stderr)
        sys.exit(1)
    nopts = sum(1 for h in helps.values() for o in h["opts"]
                if o["long"] not in common)
    print("check-man: %s matches --help: %d commands, %d of their options "
          "and %d global ones" % (man, len(helps), nopts, len(hglobal)))


if __name__ == "__main__":
    main()
