"""Drives a program in a pseudo-terminal: argv[1] is a JSON list of
[expect, send] steps; the program is argv[2:]. For each step it waits (up
to 30 s) until `expect` appears in the output since the previous step, then
types `send`. Prints a JSON object: the text seen during each step, whether
every step matched, and the exit status."""
import json, os, pty, select, sys, time

steps = json.loads(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])

buffer = b""
segments = []
ok = True

def read_some(timeout):
    global buffer
    ready, _, _ = select.select([fd], [], [], timeout)
    if not ready:
        return True
    try:
        data = os.read(fd, 4096)
    except OSError:
        return False
    if not data:
        return False
    buffer += data
    return True

for expect, send in steps:
    deadline = time.time() + 30
    found = -1
    while time.time() < deadline:
        found = buffer.find(expect.encode())
        if found >= 0:
            break
        if not read_some(0.2):
            break
    found = buffer.find(expect.encode())
    if found < 0:
        segments.append(buffer.decode(errors="replace"))
        ok = False
        break
    end = found + len(expect)
    segments.append(buffer[:end].decode(errors="replace"))
    buffer = buffer[end:]
    time.sleep(0.3)
    os.write(fd, send.encode())

deadline = time.time() + 20
status = None
while time.time() < deadline:
    done, code = os.waitpid(pid, os.WNOHANG)
    if done:
        status = os.waitstatus_to_exitcode(code)
        break
    read_some(0.2)
if status is None:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
segments.append(buffer.decode(errors="replace"))
print(json.dumps({"ok": ok, "status": status, "segments": segments}))
