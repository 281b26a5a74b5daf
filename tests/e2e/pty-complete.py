#!/usr/bin/env python3
"""pty-complete.py -- press TAB in a real interactive shell, print the line.

    python3 tests/e2e/pty-complete.py SHELL SETUP TYPED

Starts SHELL (bash or zsh) interactive on a pseudo-terminal with no rc
files, runs SETUP (e.g. `. completions/huddle.bash`), types TYPED and a
TAB, then Ctrl-A and `echo RESULT:` and Enter, so the shell prints the
command line exactly as completion left it. Prints that line (what follows
"RESULT: "), exit 0; exit 1 with what the terminal showed when no line came
within 20 seconds (the shells may be slow on a loaded machine).
"""
import os
import pty
import re
import select
import sys
import time


def main():
    shell, setup, typed = sys.argv[1:4]
    argv = {"bash": ["bash", "--norc", "--noprofile", "-i"],
            "zsh": ["zsh", "-f", "-i"]}[shell]
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["PS1"] = "$ "
        os.environ["TERM"] = "dumb"
        os.execvp(argv[0], argv)
    seen = b""

    def read_for(secs, until=None):
        nonlocal seen
        end = time.time() + secs
        while time.time() < end:
            r, _, _ = select.select([fd], [], [], 0.1)
            if r:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    return None
                if not chunk:
                    return None
                seen += chunk
            if until is not None:
                m = re.search(until, seen)
                if m:
                    return m
        return None

    def send(s):
        os.write(fd, s.encode())

    send(setup + "\necho SETUP''DONE\n")
    read_for(20, rb"SETUPDONE")
    # The shell reads the keys in order: the completion runs to its end
    # before Ctrl-A moves to the start of the line it left.
    send(typed + "\t\x01echo RESULT: \n")
    m = read_for(20, rb"\nRESULT: ([^\r\n]*)\r?\n")
    try:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    except OSError:
        pass
    if m is None:
        sys.stderr.write("no result line; the terminal showed:\n%r\n" % seen)
        sys.exit(1)
    print(m.group(1).decode(errors="replace").rstrip())


if __name__ == "__main__":
    main()
