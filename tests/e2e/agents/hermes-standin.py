#!/usr/bin/env python3
# hermes-standin.py -- a stand-in for Hermes Agent's `hermes` CLI, for
# test-hermes.sh: Hermes is a Python program that cannot be installed on
# the test machines (no network), so this plays the part its published
# CLI reference gives the scripted one-shot entry point
# (hermes-agent.nousresearch.com/docs/reference/cli-commands):
#   hermes [--resume SESSION] [--usage-file FILE] [-m MODEL]
#          [--provider P] -z PROMPT
#   hermes --version
# prints the final reply alone on stdout, writes the JSON usage report
# (session_id, tokens, estimated_cost_usd, completed, failed) to FILE
# even when the run fails, and exits non-zero on failure.
# Before answering it checks the home it was given ($HERMES_HOME) as a
# guest would want it kept, and fails the run (exit 1, the reason on
# stderr) on the first thing wrong:
#   - the home is 0700; config.yaml and a seeded .env are 0600;
#   - config.yaml loads with PyYAML's safe_load (as Hermes loads it) and
#     its mcp_servers has exactly the server "huddle", naming this agent's
#     bound huddle: the stdio command with --team/--agent of
#     $HUDDLE_TEAM/$HUDDLE_AGENT, or the URL $HUDDLE_MCP_URL with the
#     bearer token $HUDDLE_MCP_TOKEN;
#   - on the first run, config.yaml outside huddle's block is the user's
#     ~/.hermes/config.yaml byte for byte and .env the user's .env; on
#     later runs it is what this stand-in left there (it adds a line each
#     run, as `hermes config set` would): the seed was not copied again;
#   - what it left behind in earlier runs is untouched: memories/MEMORY.md
#     (one entry more each run), skills/standin-notes/SKILL.md, and its
#     state file (sessions/standin-state.json);
#   - the first run resumes nothing; a later one resumes the session the
#     run before reported.
# Then it connects to huddle's MCP server with that config (the stdio
# command spawned, or the URL over HTTP) and posts "hermes run N from
# AGENT" to the room with team_chat_post, and answers
# "hermes run N: posted to the room". A prompt containing STANDIN_FAIL
# makes it fail as Hermes does (report failed, a message on stderr,
# exit 1) after the checks.
import hashlib
import json
import os
import stat
import subprocess
import sys
import urllib.request

import yaml

BEGIN = ("# >>> huddle: its MCP server for this agent, rewritten every run; "
         "edit above this line >>>")
END = "# <<< huddle <<<"


def die(msg, usage=None, session=None):
    if usage:
        write_usage(usage, session, failed=True)
    sys.stderr.write("hermes-standin: %s\n" % msg)
    sys.exit(1)


def write_usage(path, session, failed=False):
    report = {"estimated_cost_usd": 0.0012, "input_tokens": 1000,
              "output_tokens": 50, "cache_read_tokens": 0,
              "cache_write_tokens": 0, "reasoning_tokens": 0,
              "total_tokens": 1050, "api_calls": 1, "model": "standin",
              "provider": "standin", "session_id": session,
              "completed": not failed, "failed": failed}
    with open(path, "w") as f:
        json.dump(report, f)


def parse_args(argv):
    opts = {"resume": None, "usage": None, "model": None, "provider": None,
            "prompt": None}
    names = {"--resume": "resume", "-r": "resume", "--usage-file": "usage",
             "-m": "model", "--model": "model", "--provider": "provider",
             "-z": "prompt"}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a not in names or i + 1 >= len(argv):
            sys.stderr.write("hermes: error: unrecognized arguments: %s\n" % a)
            sys.exit(2)
        opts[names[a]] = argv[i + 1]
        i += 2
    if opts["prompt"] is None:
        sys.stderr.write("hermes: error: -z PROMPT is required here\n")
        sys.exit(2)
    return opts


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def outside_block(text):
    lines, inside, blocks = [], False, 0
    for line in text.splitlines(keepends=True):
        if line.rstrip("\n") == BEGIN:
            inside, blocks = True, blocks + 1
        elif line.rstrip("\n") == END:
            inside = False
        elif not inside:
            lines.append(line)
    return "".join(lines), blocks


def check_server(srv, env):
    if set(srv) != {"huddle"}:
        return "mcp_servers is %r, not huddle's server alone" % sorted(srv)
    h = srv["huddle"]
    if env.get("HUDDLE_MCP_URL"):
        if h.get("url") != env["HUDDLE_MCP_URL"]:
            return "mcp url %r is not this agent's %r" % (
                h.get("url"), env["HUDDLE_MCP_URL"])
        tok = env.get("HUDDLE_MCP_TOKEN")
        want = {"Authorization": "Bearer " + tok} if tok else None
        if h.get("headers") != want:
            return "mcp headers do not carry this agent's token"
        return None
    args = h.get("args") or []
    if not h.get("command") or not os.path.isabs(h["command"]):
        return "mcp command %r is not an absolute path" % h.get("command")

    def after(flag):
        return args[args.index(flag) + 1] if flag in args else None
    if after("--agent") != env.get("HUDDLE_AGENT") or \
            after("--team") != env.get("HUDDLE_TEAM") or "mcp" not in args:
        return "mcp command %r does not serve %s of %s" % (
            [h["command"]] + args, env.get("HUDDLE_AGENT"),
            env.get("HUDDLE_TEAM"))
    return None


class Stdio:
    def __init__(self, h):
        env = dict(os.environ)
        env.update(h.get("env") or {})
        self.p = subprocess.Popen([h["command"]] + h.get("args", []),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  env=env, text=True)
        self.n = 0

    def call(self, method, params, notify=False):
        msg = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            self.n += 1
            msg["id"] = self.n
        self.p.stdin.write(json.dumps(msg) + "\n")
        self.p.stdin.flush()
        if notify:
            return None
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("the MCP server closed its output")
            r = json.loads(line)
            if r.get("id") == self.n:
                return r

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


class Http:
    def __init__(self, h):
        self.url, self.headers, self.n, self.session = h["url"], dict(
            h.get("headers") or {}), 0, None

    def call(self, method, params, notify=False):
        msg = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            self.n += 1
            msg["id"] = self.n
        hdr = dict(self.headers)
        hdr["Content-Type"] = "application/json"
        hdr["Accept"] = "application/json, text/event-stream"
        if self.session:
            hdr["Mcp-Session-Id"] = self.session
        req = urllib.request.Request(self.url, json.dumps(msg).encode(), hdr)
        with urllib.request.urlopen(req, timeout=30) as resp:
            self.session = resp.headers.get("Mcp-Session-Id") or self.session
            body = resp.read().decode()
        if notify:
            return None
        for line in body.splitlines():
            line = line[5:].strip() if line.startswith("data:") else line
            if line.startswith("{"):
                r = json.loads(line)
                if r.get("id") == self.n:
                    return r
        raise RuntimeError("no answer to %s in %r" % (method, body[:200]))

    def close(self):
        pass


def post(h, text):
    c = Http(h) if h.get("url") else Stdio(h)
    try:
        r = c.call("initialize", {"protocolVersion": "2025-06-18",
                                  "capabilities": {},
                                  "clientInfo": {"name": "hermes-standin",
                                                 "version": "0"}})
        if "result" not in r:
            raise RuntimeError("initialize: %r" % r)
        c.call("notifications/initialized", {}, notify=True)
        r = c.call("tools/call", {"name": "team_chat_post",
                                  "arguments": {"text": text}})
        res = r.get("result") or {}
        if res.get("isError") or "error" in r:
            raise RuntimeError("team_chat_post: %r" % r)
        return res
    finally:
        c.close()


def main():
    if sys.argv[1:] in (["--version"], ["-V"]):
        print("Hermes Agent v0.0.0 (hermes-standin, a test stand-in)")
        return
    o = parse_args(sys.argv[1:])
    env = os.environ
    home = env.get("HERMES_HOME")
    if not home or not os.path.isdir(home):
        die("HERMES_HOME is not a directory: %r" % home, o["usage"])
    state_path = os.path.join(home, "sessions", "standin-state.json")
    state = {"run": 0}
    if os.path.exists(state_path):
        with open(state_path) as f:
            state = json.load(f)
    run = state["run"] + 1
    u = o["usage"]

    if mode(home) != 0o700:
        die("the home is %o, not 700" % mode(home), u)
    cfg_path = os.path.join(home, "config.yaml")
    if not os.path.exists(cfg_path):
        die("no config.yaml in the home", u)
    if mode(cfg_path) != 0o600:
        die("config.yaml is %o, not 600" % mode(cfg_path), u)
    with open(cfg_path) as f:
        text = f.read()
    try:
        cfg = yaml.safe_load(text)
    except yaml.YAMLError as e:
        die("config.yaml is not YAML: %s" % e, u)
    user, blocks = outside_block(text)
    if blocks != 1:
        die("config.yaml has %d huddle blocks, not 1" % blocks, u)
    bad = check_server((cfg or {}).get("mcp_servers") or {}, env)
    if bad:
        die(bad, u)

    user_dir = os.path.join(env["HOME"], ".hermes")
    env_path = os.path.join(home, ".env")
    if run == 1:
        with open(os.path.join(user_dir, "config.yaml")) as f:
            if f.read() != user:
                die("config.yaml outside huddle's block is not the user's "
                    "config", u)
        if not os.path.exists(env_path) or \
                sha(env_path) != sha(os.path.join(user_dir, ".env")):
            die(".env is not the user's .env", u)
        if o["resume"] is not None:
            die("the first run resumes %r" % o["resume"], u)
    else:
        if user != state["config"]:
            die("config.yaml outside huddle's block changed since run %d "
                "(seeded again?)" % (run - 1), u, state["session"])
        if sha(env_path) != state["env"]:
            die(".env changed since run %d" % (run - 1), u, state["session"])
        for rel, digest in state["kept"].items():
            p = os.path.join(home, rel)
            if not os.path.exists(p) or sha(p) != digest:
                die("%s changed since run %d" % (rel, run - 1), u,
                    state["session"])
        if o["resume"] != state["session"]:
            die("run %d resumes %r, not %r" % (run, o["resume"],
                                               state["session"]), u)
    if mode(env_path) != 0o600:
        die(".env is %o, not 600" % mode(env_path), u)

    session = o["resume"] or "20260101_000000_standin%d" % os.getpid()
    if "STANDIN_FAIL" in o["prompt"]:
        die("API call failed after 3 retries: HTTP 503: upstream down", u,
            session)
    try:
        post(cfg["mcp_servers"]["huddle"],
             "hermes run %d from %s" % (run, env.get("HUDDLE_AGENT")))
    except Exception as e:  # noqa: BLE001 -- the run fails, saying why
        die("MCP: %s" % e, u, session)

    # what Hermes keeps: memory, a skill, its state; and an edit to its
    # config above huddle's block, as `hermes config set` would make
    os.makedirs(os.path.join(home, "memories"), exist_ok=True)
    os.makedirs(os.path.join(home, "skills", "standin-notes"), exist_ok=True)
    os.makedirs(os.path.join(home, "sessions"), exist_ok=True)
    with open(os.path.join(home, "memories", "MEMORY.md"), "a") as f:
        f.write("run %d: posted to the room\n§\n" % run)
    skill = os.path.join(home, "skills", "standin-notes", "SKILL.md")
    if not os.path.exists(skill):
        with open(skill, "w") as f:
            f.write("---\nname: standin-notes\ndescription: notes\n---\n")
    edited = "# hermes-standin run %d was here\n" % run + user
    with open(cfg_path, "w") as f:  # keeps its mode
        f.write("# hermes-standin run %d was here\n" % run + text)
    kept = {r: sha(os.path.join(home, r)) for r in
            ("memories/MEMORY.md", "skills/standin-notes/SKILL.md")}
    with open(state_path, "w") as f:
        json.dump({"run": run, "session": session, "kept": kept,
                   "config": edited, "env": sha(env_path)}, f)
    if u:
        write_usage(u, session)
    print("hermes run %d: posted to the room" % run)


if __name__ == "__main__":
    main()
