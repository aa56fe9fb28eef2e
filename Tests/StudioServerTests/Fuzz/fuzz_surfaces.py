#!/usr/bin/python3
"""Fuzzes every input surface of a running `studio serve` by grammar, with Hypothesis.

Starts the built binary on loopback (two test-pattern cameras, a small program, its own database,
socket, config file and HTTP port in a temporary directory), then draws, for each surface:

  control  request lines for the control socket: every command the server's `help` lists, with
           arguments keyed by the names docs/control-protocol.md gives them (valid, near-valid, wrong
           types, huge numbers, unicode, missing or extra keys), truncated JSON, raw bytes, long lines;
  http     requests for every route of docs/http-api.md's tables (and unknown ones), any method,
           Host/Origin/Authorization variants, JSON and garbage bodies;
  config   YAML for the config file the server was started with (sections and keys from
           docs/config.md), applied with `reload`;
  cli      `studio COMMAND ARGS...` against the server, commands and flags from `studio help`.
  osc      (only when asked: the server then gets `osc.listen`) OSC packets for its UDP port: messages to
           the addresses of docs/control-surfaces.md's table with names and argument names in them,
           every type tag, bundles nested, truncated, corrupted and raw datagrams.

Properties, checked after every example: the server is alive and answers `ping` in time; every reply
came before its deadline and is well formed (control: JSON with ok/result or error{code, message};
HTTP: a status line and, for an error, a JSON error body; CLI: exit 0, 1 or 2, a failure saying a
sentence on stderr; OSC: the OSC thread still answers a probe, every datagram back is an OSC message), and no message holds a program's internals (`Optional(`, a Swift type, a
Foundation error domain). At the end the program's late ticks grew no more than twice those of a
witness, plus two, plus 1% of the window's frames: the witness is a second server started the same way
and left alone over the same window, so the machine's own noise (a busy CI machine makes both late) is
told apart from what the fuzzing did; the 1% is the CPU the fuzzed server's request threads take.

An example that kills the server fails as such, whatever the client saw, and the server is started
again on the same socket, port and database (its log kept as crash-N.log), so Hypothesis can replay
and shrink the example.

Prints one JSON line: examples per surface, seconds, late ticks; exits 1 with the first failure (and
Hypothesis's shrunk example) on stderr. Stops by itself: bounded examples, or minutes per surface.
Every address is on loopback: drawn URLs are rewritten to 127.0.0.1, drawn paths to names in the
temporary directory.
"""
import argparse, json, os, re, signal, socket, subprocess, sys, tempfile, time, traceback

from hypothesis import HealthCheck, given, seed as hseed, settings, strategies as st

# OSC packets are built and read by the tests' own OSC script (struct, from the 1.0 layout).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "TallyOutTests"))
import osc_packet  # noqa: E402

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "docs")
BAD_MARKERS = ["Optional(", "ClientFailure(", "NSCocoaErrorDomain", "Dictionary<", "DecodingError", "Swift.",
               "Fatal error", "fatalError"]
DEADLINE = 10.0  # seconds any one reply may take (a `switch` waits a frame, a `report` reads the database)
# A CLI command that lists a whole session's history: after minutes of fuzzing the session holds tens of
# thousands of events (62,000 after 40 minutes: 21 MB of JSON), which a debug build on a loaded machine
# takes 20 s to list through the server (docs/security.md). Slow, not hung.
HISTORY_COMMANDS = {"log", "report", "onair", "recordings", "sessions"}
HISTORY_DEADLINE = 60.0


class Failure(Exception):
    pass


def check_sentence(text, where):
    for marker in BAD_MARKERS:
        if marker in text:
            raise Failure(f"{where}: the message holds {marker!r}: {text[:500]!r}")


# --- what the docs and the server declare -------------------------------------------------------

def doc_tokens(path, row_pattern):
    """The backticked words in the table rows of a doc that match row_pattern."""
    words = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            if re.match(row_pattern, line):
                words.update(w for w in re.findall(r"`([a-z_][a-z0-9_]*)`", line))
    return sorted(words)


def command_arguments():
    """{command: its argument names}, from the arguments column of docs/control-protocol.md's command tables."""
    arguments = {}
    with open(os.path.join(DOCS, "control-protocol.md"), encoding="utf-8") as f:
        for line in f:
            match = re.match(r"\| `([a-z_]+)` \| ([^|]*) \|", line)
            if match:
                arguments[match.group(1)] = sorted(set(re.findall(r"`([a-z_][a-z0-9_]*)`", match.group(2))))
    return arguments


def osc_addresses():
    """The address templates of docs/control-surfaces.md's "OSC addresses" table."""
    with open(os.path.join(DOCS, "control-surfaces.md"), encoding="utf-8") as f:
        return sorted(set(re.findall(r"^\| `(/studio/[^`]*)` \|", f.read(), re.M)))


def http_routes():
    """(method, path) of every route in docs/http-api.md's tables."""
    routes = []
    with open(os.path.join(DOCS, "http-api.md"), encoding="utf-8") as f:
        for line in f:
            for method, path in re.findall(r"`(GET|POST|HEAD) (/[^` ]*)`", line):
                routes.append((method, path))
    return sorted(set(routes))


# --- loopback only --------------------------------------------------------------------------------

URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#\s]*")


def tame(text, directory):
    """Drawn text made safe to hand the server: URLs point at 127.0.0.1, paths stay in `directory`."""
    text = URL.sub(lambda m: m.group(0).split("://")[0] + "://127.0.0.1:9", text)
    return text.replace("/", "_").replace("_127.0.0.1:9", "/127.0.0.1:9").replace(":__127", "://127")


def tame_value(value, directory):
    if isinstance(value, str):
        return tame(value, directory)
    if isinstance(value, list):
        return [tame_value(v, directory) for v in value]
    if isinstance(value, dict):
        return {tame(k, directory): tame_value(v, directory) for k, v in value.items()}
    return value


# --- the server ------------------------------------------------------------------------------------

def free_port(kind=socket.SOCK_STREAM):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    def __init__(self, binary, directory, token=None, osc=False):
        self.binary, self.directory = binary, directory
        # With a token (`--token`), the file sets http.token: every HTTP request must carry it.
        self.config_text = "# fuzzed\n" + (f"http:\n  token: {token}\n" if token else "")
        # With the osc surface, the file sets osc.listen (a fixed key: a reload of a file without it is refused).
        self.osc_port = free_port(socket.SOCK_DGRAM) if osc else None
        if osc:
            self.config_text += f"osc:\n  listen: 127.0.0.1:{self.osc_port}\n"
        self.socket = os.path.join(directory, "studio.sock")
        self.db = os.path.join(directory, "studio.db")
        self.config = os.path.join(directory, "studio.yaml")
        self.port = free_port()
        self.token = token
        with open(self.config, "w") as f:
            f.write(self.config_text)
        self.crashes = 0
        self.launch()

    def launch(self):
        """Starts `studio serve` (again after a crash: same socket, port, database and config)."""
        binary, directory = self.binary, self.directory
        self.log = open(os.path.join(directory, "serve.log"), "wb")
        self.process = subprocess.Popen(
            [binary, "serve", "--config", self.config, "--cameras", "2", "--program", "640x360@30",
             "--preset", "ultrafast", "--bitrate", "1500k", "--http", f"127.0.0.1:{self.port}",
             "--db", self.db, "--socket", self.socket],
            stdout=self.log, stderr=subprocess.STDOUT, cwd=directory)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise Failure(f"studio serve exited at start ({self.process.returncode})")
            try:
                if self.request({"id": 0, "command": "ping"})["ok"]:
                    break
            except (OSError, Failure):
                time.sleep(0.1)  # polling for the socket to appear, bounded by the deadline
        else:
            raise Failure("studio serve did not answer ping within 30 s")

    def revive(self):
        """After a crash: keeps its log as crash-N.log and starts the server again, so the fuzzer can replay
        and shrink the example that killed it (and a long run goes on). Returns the exit status, or None
        when the server is alive."""
        if self.process.poll() is None:
            return None
        status = self.process.returncode
        self.log.close()
        self.crashes += 1
        os.rename(os.path.join(self.directory, "serve.log"), os.path.join(self.directory, f"crash-{self.crashes}.log"))
        with open(self.config, "w") as f:  # the config surface may have left one the server refuses
            f.write(self.config_text)
        self.launch()
        return status

    def alive(self, where):
        if self.process.poll() is not None:
            raise Failure(f"{where}: studio serve died ({self.process.returncode}); its log ends:\n"
                          + open(os.path.join(self.directory, "serve.log"), errors="replace").read()[-3000:])
        reply = self.request({"id": "alive", "command": "ping"})
        if reply.get("result") != {"pong": True}:
            raise Failure(f"{where}: ping answered {reply}")

    def exchange(self, payload, sentinel="fuzz-sentinel"):
        """Sends payload then a ping with the sentinel id; returns every reply line up to the sentinel's."""
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(DEADLINE)
        try:
            s.connect(self.socket)
            s.sendall(payload + b"\n" + json.dumps({"id": sentinel, "command": "ping"}).encode() + b"\n")
            buffer, lines, deadline = b"", [], time.monotonic() + DEADLINE
            while True:
                if time.monotonic() > deadline:
                    raise Failure(f"no reply to the sentinel within {DEADLINE} s; so far {lines[:3]}")
                try:
                    chunk = s.recv(1 << 16)
                except socket.timeout:
                    raise Failure(f"no reply within {DEADLINE} s; so far {lines[:3]}")
                if not chunk:
                    raise Failure(f"the server closed the connection before the sentinel; so far {lines[:3]}")
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    lines.append(line)
                    try:
                        if json.loads(line).get("id") == sentinel:
                            return lines[:-1]
                    except (ValueError, AttributeError):
                        pass
        finally:
            s.close()

    def request(self, message):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(DEADLINE)
        try:
            s.connect(self.socket)
            s.sendall(json.dumps(message).encode() + b"\n")
            buffer = b""
            while b"\n" not in buffer:
                chunk = s.recv(1 << 16)
                if not chunk:
                    raise Failure("the server closed the connection without a reply")
                buffer += chunk
            return json.loads(buffer.split(b"\n", 1)[0])
        finally:
            s.close()

    def late_ticks(self):
        return self.request({"id": "late", "command": "status"})["result"]["program"]["late_ticks"]

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.log.close()


def check_control_reply(line, where):
    try:
        reply = json.loads(line)
    except ValueError:
        raise Failure(f"{where}: a reply that is not JSON: {line[:300]!r}")
    if not isinstance(reply, dict):
        raise Failure(f"{where}: a reply that is not an object: {line[:300]!r}")
    if "event" in reply and "id" not in reply:
        return
    if "id" not in reply or reply.get("ok") not in (True, False):
        raise Failure(f"{where}: a reply without id/ok: {line[:300]!r}")
    if reply["ok"]:
        if "result" not in reply:
            raise Failure(f"{where}: ok without result: {line[:300]!r}")
    else:
        error = reply.get("error")
        if not (isinstance(error, dict) and isinstance(error.get("code"), str) and isinstance(error.get("message"), str)
                and error["message"].strip()):
            raise Failure(f"{where}: an error without code and message: {line[:300]!r}")
        check_sentence(error["message"], where)


# --- grammars --------------------------------------------------------------------------------------

def json_values(names):
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(), st.integers(min_value=-2**70, max_value=2**70),
        st.integers(min_value=-2**63, max_value=2**63 - 1),
        st.sampled_from([0, -1, 1, 2**31 - 1, 2**31, 2**53 + 1, 2**63 - 1, -2**63, 2**64, 10**400]),
        st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(names),
        st.text(max_size=40), st.sampled_from(["", "-inf", "mono", "none", "on", "off", "1e400", "NaN", "é\u0000\U0001F600",
                                               "rtmp://127.0.0.1:1/live/key", "srt://127.0.0.1:9000?streamid=x"]))
    return st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                          st.dictionaries(st.text(max_size=10), inner, max_size=4)),
                        max_leaves=8)


def control_lines(commands, keys, names, own_keys):
    values = json_values(names)
    own = st.sampled_from(commands).flatmap(lambda c: st.fixed_dictionaries({
        "id": st.integers(1, 10**6), "command": st.just(c),
        "arguments": st.dictionaries(st.sampled_from(own_keys.get(c) or keys), values, max_size=4)}))
    arguments = st.one_of(st.none(), st.dictionaries(st.one_of(st.sampled_from(keys), st.text(max_size=12)), values, max_size=5),
                          values)
    request = st.fixed_dictionaries(
        {"id": st.one_of(st.integers(min_value=-2**80, max_value=2**80), st.text(max_size=8), st.none(), st.booleans())},
        optional={"command": st.one_of(st.sampled_from(commands), st.text(max_size=12), values), "arguments": arguments,
                  "extra": values})
    valid = st.fixed_dictionaries({"id": st.integers(1, 10**6), "command": st.sampled_from(commands),
                                   "arguments": st.dictionaries(st.sampled_from(keys), values, max_size=4)})
    encoded = st.one_of(valid, request).map(lambda m: json.dumps(m).encode())
    own_encoded = own.map(lambda m: json.dumps(m).encode())
    return st.one_of(
        own_encoded, own_encoded, own_encoded, own_encoded, own_encoded, encoded,
        st.tuples(encoded, st.integers(0, 200)).map(lambda t: t[0][:t[1]]),               # truncated
        st.binary(max_size=200).map(lambda b: b.replace(b"\n", b" ")),                         # raw bytes
        st.tuples(st.sampled_from([1000, 65535, 65536, 65537, 70000]), st.sampled_from([b"a", b"\xff", b"{"]))
          .map(lambda t: b'{"id":1,"command":"ping","x":"' + t[1] * t[0] + b'"}'),              # long lines
        json_values(names).map(lambda v: json.dumps(v).encode()))                             # not an object


def http_requests(routes, keys, names, port, token=None):
    segment = st.one_of(st.sampled_from(names), st.text(max_size=12).map(lambda s: "".join(
        c if c.isalnum() else "%%%02X" % (ord(c) & 0xFF) for c in s)), st.sampled_from(["1", "0", "-1", "99999999999999999999", "..", "%00", "%ff"]))

    def fill(path, parts):
        parts = iter(parts)
        return re.sub(r"\{[^}]*\}", lambda m: next(parts, "x"), path)

    path = st.one_of(
        st.tuples(st.sampled_from([p for _, p in routes]), st.lists(segment, min_size=3, max_size=3)).map(lambda t: fill(*t)),
        st.text(alphabet="/abcdefgh.%?=&0123456789", max_size=40).map(lambda s: "/" + s),
        st.tuples(st.sampled_from([p for _, p in routes]), st.dictionaries(st.sampled_from(keys + ["token", "limit"]), segment, max_size=3))
          .map(lambda t: re.sub(r"\{[^}]*\}", "1", t[0]) + ("?" + "&".join(f"{k}={v}" for k, v in t[1].items()) if t[1] else "")))
    method = st.one_of(st.sampled_from(["GET", "POST", "HEAD", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE"]),
                       st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=10))
    host = st.sampled_from([f"127.0.0.1:{port}", "127.0.0.1", f"localhost:{port}", "evil.example", "", "[::1]", "a" * 300, None])
    origin = st.sampled_from([None, f"http://127.0.0.1:{port}", "http://evil.example", "null", "", f"https://127.0.0.1:{port}"])
    auth = st.sampled_from([None, "Bearer x", "bearer ", "Basic Zm9vOmJhcg==", "Bearer " + "a" * 5000, "Bearer \u00e9"])
    if token:  # the right token (in any scheme case), near misses, and none, in the header or the query
        auth = st.one_of(auth, st.sampled_from([f"Bearer {token}", f"bearer {token}", f"BEARER {token}", f"Bearer {token}x",
                                                f"Bearer {token[:-1]}", f"Basic {token}", f"Bearer  {token}", token]))
        query = st.sampled_from([None, f"token={token}", f"token={token}x", f"token={token[:-1]}", "token=", f"tok={token}"])
        path = st.tuples(path, query).map(lambda t: t[0] if t[1] is None else t[0] + ("&" if "?" in t[0] else "?") + t[1])
    values = json_values(names)
    body = st.one_of(st.just(b""), st.dictionaries(st.sampled_from(keys), values, max_size=4).map(lambda d: json.dumps(d).encode()),
                     values.map(lambda v: json.dumps(v).encode()), st.binary(max_size=300),
                     st.sampled_from([b"{", b'{"source":', b"\xff\xfe", b"{}" * 40000]))
    content_type = st.sampled_from([None, "application/json", "text/plain", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded"])
    return st.tuples(method, path, host, origin, auth, content_type, body)


def yaml_documents(sections, keys, names):
    scalar = st.one_of(st.sampled_from(["", "0", "-1", "1e99", "99999999999999999999999", "yes", "no", "null", "~", "1920x1080@30",
                                        "640x360@30", "0x0@0", "cam1", "cam2", "[", "{", "*a", "&a x", "!!binary x", "'q", '"q', "\t"]),
                     st.sampled_from(names), st.integers(-2**64, 2**64).map(str), st.text(max_size=20).map(json.dumps))
    value = st.recursive(scalar, lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda l: "[" + ", ".join(l) + "]"),
        st.dictionaries(st.sampled_from(keys), inner, max_size=3).map(lambda d: "{" + ", ".join(f"{k}: {v}" for k, v in d.items()) + "}")),
        max_leaves=10)
    entry = st.tuples(st.one_of(st.sampled_from(sections), st.sampled_from(keys), st.text(max_size=8)),
                      st.dictionaries(st.sampled_from(keys), value, max_size=4), value, st.booleans())

    def render(entries):
        lines = []
        for key, mapping, flat, nested in entries:
            if nested and mapping:
                lines.append(f"{key}:")
                lines += [f"  {k}: {v}" for k, v in mapping.items()]
            else:
                lines.append(f"{key}: {flat}")
        return "\n".join(lines) + "\n"

    return st.one_of(st.lists(entry, max_size=5).map(render), st.text(max_size=200),
                     st.binary(max_size=200).map(lambda b: b.decode("latin-1")))


def osc_packets(addresses, keys, names):
    """Datagrams for the OSC port: messages and nested bundles of every type, then bytes truncated,
    corrupted, or drawn raw."""
    segment = st.one_of(st.sampled_from(names), st.text(max_size=10).map(lambda t: t.replace("/", "_").replace("\0", "")))
    address = st.one_of(
        st.tuples(st.sampled_from(addresses), segment, st.one_of(st.none(), st.sampled_from(keys)))
          .map(lambda t: re.sub(r"\{[a-z]+(:int)?\}", lambda _: t[1], t[0]) + (f"/{t[2]}" if t[2] else "")),
        st.sampled_from(["/studio/subscribe", "/studio/unsubscribe", "/studio", "/", "/studio//cut", "/studio/*", "#bundle"]),
        st.text(max_size=30).map(lambda t: "/" + t.replace("\0", "")))
    argument = st.one_of(
        st.integers(-2**31, 2**31 - 1).map(lambda v: ["i", v]), st.integers(-2**63, 2**63 - 1).map(lambda v: ["h", v]),
        st.floats(width=32).map(lambda v: ["f", v]), st.floats().map(lambda v: ["d", v]),
        st.one_of(st.sampled_from(names), st.text(max_size=20).map(lambda t: t.replace("\0", ""))).map(lambda v: ["s", v]),
        st.sampled_from([["T"], ["F"], ["N"], ["i", 0], ["i", 1], ["f", 1.0], ["f", -6.0], ["s", "-inf"], ["i", 9001]]))
    message = st.tuples(address, st.lists(argument, max_size=4)).map(lambda t: [t[0]] + t[1])
    packet = st.recursive(message, lambda inner: st.fixed_dictionaries(
        {"time": st.sampled_from([0, 1, 2**64 - 1]), "elements": st.lists(inner, max_size=3)}), max_leaves=6)
    encoded = packet.map(osc_packet.encode)
    return st.one_of(
        encoded, encoded, encoded,
        st.tuples(encoded, st.integers(0, 100)).map(lambda t: t[0][:t[1]]),                          # truncated
        st.tuples(encoded, st.integers(0, 100), st.integers(0, 255))                                   # a byte changed
          .map(lambda t: t[0][:t[1]] + bytes([t[2]]) + t[0][t[1] + 1:] if t[1] < len(t[0]) else t[0]),
        st.tuples(encoded, st.sampled_from([b"\x7f\xff\xff\xf0", b"\x00\x00\x00\x06", b"\x00\x00\x00\x00"]))  # a bundle's size
          .map(lambda t: t[0][:16] + t[1] + t[0][20:] if t[0].startswith(b"#bundle") else t[0]),
        st.lists(message, min_size=1, max_size=3).map(lambda ms: b"".join(osc_packet.encode(m) for m in ms)),  # no bundle around
        st.sampled_from([b",b\0\0", b"/a\0\0,b\0\0\0\0\0\x04abcd", b"#bundle\0" * 3]),
        st.binary(max_size=120))                                                                 # raw


def cli_invocations(usage, names):
    commands = sorted(usage)
    word = st.one_of(st.sampled_from(names), st.text(max_size=12), st.sampled_from(["on", "off", "0", "-1", "1e9", "99999999999999999999",
                                                                                  "mix", "HH:MM:SS", "00:00:01", "x=1", "brightness=140", "0.5", "--", "-", ""]))

    def args_for(command):
        flags = usage[command] or ["--json"]
        return st.lists(st.one_of(st.sampled_from(flags), word, st.text(alphabet="-abcdefghijklmnopqrstuvwxyz", max_size=12)), max_size=5)

    return st.sampled_from(commands).flatmap(lambda c: st.tuples(st.just(c), args_for(c)))


# --- the surfaces ----------------------------------------------------------------------------------

class Surfaces:
    def __init__(self, server, binary):
        self.server, self.binary, self.counts, self.exits = server, binary, {}, {}
        help_reply = server.request({"id": "help", "command": "help"})
        self.commands = [c["name"] for c in help_reply["result"]["commands"]]
        cameras = server.request({"id": "c", "command": "cameras"})["result"]["cameras"]
        self.names = [c["name"] for c in cameras] + ["master", "tone", "program", "preview", "cam9", "backup"]
        self.keys = doc_tokens(os.path.join(DOCS, "control-protocol.md"), r"\| `[a-z_]+` \|")
        self.routes = http_routes()
        self.config_sections = doc_tokens(os.path.join(DOCS, "config.md"), r"\|\s*`[a-z_]+`")
        self.config_keys = sorted(set(doc_tokens(os.path.join(DOCS, "config.md"), r".*") + self.config_sections))
        self.usage = self.cli_usage()

    def cli_usage(self):
        """Commands and their flags from `studio help` (those that would start something, never end, or write files left out)."""
        text = subprocess.run([self.binary, "help"], capture_output=True, text=True, timeout=DEADLINE).stdout
        usage = {}
        for name, rest in re.findall(r"^  studio ([a-z]+)(.*)$", text, re.M):
            if name not in ("serve", "doctor", "watch", "transcode", "export", "collect", "help"):
                usage[name] = sorted(set(re.findall(r"--[a-z-]+", rest)))
        return usage

    def count(self, surface):
        self.counts[surface] = self.counts.get(surface, 0) + 1

    def control(self, line):
        self.count("control")
        for reply in self.server.exchange(line):
            check_control_reply(reply, f"control {line[:200]!r}")
        self.server.alive(f"after control {line[:200]!r}")

    def http(self, request):
        self.count("http")
        method, path, host, origin, auth, content_type, body = request
        path = path.replace("://", ":__")  # the path only reaches this server; no URL in it goes further
        body = tame(body.decode("latin-1"), self.server.directory).encode("latin-1")
        head = [f"{method} {path} HTTP/1.1"]
        if host is not None:
            head.append(f"Host: {host}")
        for name, value in (("Origin", origin), ("Authorization", auth), ("Content-Type", content_type)):
            if value is not None:
                head.append(f"{name}: {value}")
        head += [f"Content-Length: {len(body)}", "Connection: close"]
        raw = ("\r\n".join(head) + "\r\n\r\n").encode("utf-8") + body
        where = f"http {raw[:300]!r}"
        s = socket.create_connection(("127.0.0.1", self.server.port), timeout=DEADLINE)
        try:
            s.sendall(raw)
            data, deadline = b"", time.monotonic() + DEADLINE
            while True:
                if time.monotonic() > deadline:
                    raise Failure(f"{where}: no complete reply within {DEADLINE} s: {data[:300]!r}")
                try:
                    chunk = s.recv(1 << 16)
                except socket.timeout:
                    raise Failure(f"{where}: no complete reply within {DEADLINE} s: {data[:300]!r}")
                except ConnectionResetError:
                    chunk = b""
                if b"\r\n\r\n" in data + chunk:
                    headers = (data + chunk).split(b"\r\n\r\n", 1)[0].decode("latin-1").lower()
                    if "multipart/x-mixed-replace" in headers or "text/event-stream" in headers:
                        data += chunk
                        break
                    match = re.search(r"content-length: (\d+)", headers)
                    if match and len((data + chunk).split(b"\r\n\r\n", 1)[1]) >= int(match.group(1)):
                        data += chunk
                        break
                if not chunk:
                    break
                data += chunk
        finally:
            s.close()
        match = re.match(rb"HTTP/1\.[01] (\d{3}) ", data)
        if not match:
            raise Failure(f"{where}: no status line in {data[:300]!r}")
        status = int(match.group(1))
        head_text, _, payload = data.partition(b"\r\n\r\n")
        token = self.server.token
        if token and status < 400 and token not in path and token not in (auth or ""):
            raise Failure(f"{where}: answered {status} to a request without the token")
        if status >= 400 and method != "HEAD" and b"application/json" in head_text.lower():
            try:
                error = json.loads(payload)["error"]
                assert isinstance(error["code"], str) and isinstance(error["message"], str) and error["message"].strip()
            except (ValueError, KeyError, TypeError, AssertionError):
                raise Failure(f"{where}: status {status} without a JSON error body: {payload[:300]!r}")
            check_sentence(error["message"], where)
        elif status >= 400 and method != "HEAD" and path.startswith("/tally/") and b"text/html" in head_text.lower():
            # The talent's tally page answers a person, in HTML: its error page must say what it knows.
            if b"camera" not in payload.lower():
                raise Failure(f"{where}: status {status} with a tally page that names no camera: {payload[:300]!r}")
        elif status >= 400 and method != "HEAD" and status not in (400,) and payload.strip():
            raise Failure(f"{where}: status {status} with a body that is not JSON: {data[:300]!r}")
        self.server.alive(where)

    def config(self, text):
        self.count("config")
        text = tame(text, self.server.directory)
        with open(self.server.config, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(text)
        line = json.dumps({"id": 1, "command": "reload"}).encode()
        for reply in self.server.exchange(line):
            check_control_reply(reply, f"config {text[:300]!r}")
        self.server.alive(f"after config {text[:300]!r}")

    def osc(self, datagram):
        self.count("osc")
        where = f"osc {datagram[:200]!r}"
        probe = osc_packet.encode(["/studio/fuzz-probe"])
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(DEADLINE)
        try:
            s.bind(("127.0.0.1", 0))
            s.sendto(datagram, ("127.0.0.1", self.server.osc_port))
            s.sendto(probe, ("127.0.0.1", self.server.osc_port))
            deadline = time.monotonic() + DEADLINE
            while True:  # every answer an OSC message, until the probe's own
                if time.monotonic() > deadline:
                    raise Failure(f"{where}: the OSC thread did not answer the probe within {DEADLINE} s")
                try:
                    reply = s.recv(1 << 16)
                except socket.timeout:
                    raise Failure(f"{where}: the OSC thread did not answer the probe within {DEADLINE} s")
                try:
                    message = osc_packet.decode(reply)
                except Exception as error:
                    raise Failure(f"{where}: an answer that is no OSC ({error}): {reply[:200]!r}")
                if not isinstance(message, list) or not message[0].startswith("/studio/"):
                    raise Failure(f"{where}: an answer that is no /studio message: {message!r}")
                if message[0] == "/studio/error":
                    check_sentence(message[-1][1], where)
                    if message[1] == ["s", "/studio/fuzz-probe"]:
                        break
        finally:
            s.close()
        self.server.alive(where)

    def cli(self, invocation):
        self.count("cli")
        command, args = invocation
        args = [tame(a, self.server.directory).replace("\x00", "") for a in args]
        argv = [self.binary, command] + args
        where = f"cli {argv[1:]!r}"
        deadline = HISTORY_DEADLINE if command in HISTORY_COMMANDS else DEADLINE
        try:
            done = subprocess.run(argv, capture_output=True, timeout=deadline, cwd=self.server.directory,
                                  env={"PATH": "/usr/bin:/bin", "HOME": self.server.directory,
                                       "STUDIO_SOCKET": self.server.socket, "STUDIO_DB": self.server.db})
        except subprocess.TimeoutExpired:
            raise Failure(f"{where}: did not end within {deadline} s")
        stderr = done.stderr.decode("utf-8", "replace")
        self.exits[done.returncode] = self.exits.get(done.returncode, 0) + 1
        if done.returncode not in (0, 1, 2):
            raise Failure(f"{where}: exit {done.returncode}; stderr {stderr[-500:]!r}")
        if done.returncode != 0 and not stderr.strip():
            raise Failure(f"{where}: exit {done.returncode} with nothing on stderr")
        check_sentence(stderr, where)
        self.server.alive(where)


def run_surface(server, strategy, action, examples, minutes, seed_value):
    """Runs `examples` examples, or with `minutes` rounds of 200, each round seeded anew, until time is up.
    An example that kills the server fails as such (whatever the client saw: a reset, a refused
    connection), and the server is started again, so Hypothesis can replay and shrink it."""
    def round_of(count, round_seed):
        @hseed(round_seed)
        @settings(max_examples=count, deadline=None, database=None, suppress_health_check=list(HealthCheck), print_blob=False)
        @given(strategy)
        def fuzz(example):
            try:
                action(example)
            except Exception as error:
                status = server.revive()
                if status is not None:
                    raise Failure(f"studio serve died (exit {status}) on this example; the client saw "
                                  f"{type(error).__name__}: {str(error)[:300]}; its log: {server.directory}/crash-{server.crashes}.log")
                raise
        fuzz()

    if not minutes:
        round_of(examples, seed_value)
        return
    stop_at, round_number = time.monotonic() + minutes * 60, 0
    while time.monotonic() < stop_at:
        round_of(200, seed_value * 1000 + round_number)
        round_number += 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--examples", type=int, default=100, help="examples per surface")
    parser.add_argument("--minutes", type=float, default=0, help="minutes per surface instead of a number of examples")
    parser.add_argument("--surfaces", default="control,http,config,cli", help="of control, http, config, cli, osc")
    parser.add_argument("--token", action="store_true",
                        help="the servers get http.token; HTTP requests draw the right token, near misses and none, and one "
                             "without it must never be answered below 400 (use with --surfaces http)")
    parser.add_argument("--idle", type=float, default=5, help="seconds to watch the idle server's late ticks first")
    options = parser.parse_args()

    directory = tempfile.mkdtemp(prefix="studio-fuzz-")
    token = "fuzz-token-" + os.urandom(8).hex() if options.token else None
    osc = "osc" in options.surfaces.split(",")
    server = Server(options.binary, directory, token, osc)
    witness = None
    started = time.monotonic()
    try:
        # The witness: the same server, never fuzzed; its late ticks over the fuzzing window are the
        # machine's noise.
        witness = Server(options.binary, tempfile.mkdtemp(prefix="studio-fuzz-witness-"), token, osc)
        surfaces = Surfaces(server, options.binary)
        late_start = server.late_ticks()
        time.sleep(options.idle)  # the noise measurement: the idle server's late ticks over this window
        late_idle = server.late_ticks() - late_start
        strategies = {
            "control": (control_lines(surfaces.commands, surfaces.keys, surfaces.names, command_arguments()), surfaces.control),
            "http": (http_requests(surfaces.routes, surfaces.keys, surfaces.names, server.port, token), surfaces.http),
            "config": (yaml_documents(surfaces.config_sections, surfaces.config_keys, surfaces.names), surfaces.config),
            "cli": (cli_invocations(surfaces.usage, surfaces.names), surfaces.cli),
            "osc": (osc_packets(osc_addresses(), surfaces.keys, surfaces.names), surfaces.osc),
        }
        seconds = {}
        late_before, witness_before = server.late_ticks(), witness.late_ticks()
        for name in options.surfaces.split(","):
            began = time.monotonic()
            strategy, action = strategies[name]
            run_surface(server, strategy, action, options.examples, options.minutes, options.seed)
            seconds[name] = round(time.monotonic() - began, 1)
        server.alive("at the end")
        late_grew = server.late_ticks() - late_before
        witness.alive("the witness at the end")
        witness_grew = witness.late_ticks() - witness_before
        # Twice the witness's, plus 1% of the window's frames (30 fps): on a 2-core machine the fuzzed
        # server's own request threads take CPU from its program thread, which the witness does not
        # have; a command that blocked the program thread would cost whole seconds of frames.
        allowance = 2 + 2 * witness_grew + int(0.01 * 30 * sum(seconds.values()))
        report = {"examples": surfaces.counts, "seconds": seconds, "late_ticks_idle": late_idle, "idle_s": options.idle,
                  "late_ticks_fuzzing": late_grew, "late_ticks_witness": witness_grew, "late_allowance": allowance, "crashes": server.crashes,
                  "commands": len(surfaces.commands),
                  "routes": len(surfaces.routes), "cli_exits": surfaces.exits, "cli_commands": len(surfaces.usage), "seed": options.seed}
        print(json.dumps(report), flush=True)
        if late_grew > allowance:
            raise Failure(f"the program's late ticks grew by {late_grew} while fuzzing, the witness's by {witness_grew} "
                          f"(allowed: {allowance}; {late_idle} idle in {options.idle} s before)")
    except Exception as failure:  # a Failure, or what Hypothesis raised with it (several at once)
        print(f"fuzz: FAILED: {type(failure).__name__}: {failure}", file=sys.stderr)
        if not isinstance(failure, Failure):  # the fuzzer's own bug, not the server's: show where
            traceback.print_exc()
        print(json.dumps({"failed": str(failure)[:2000], "examples": getattr(locals().get("surfaces"), "counts", {})}))
        return 1
    finally:
        server.stop()
        if witness:
            witness.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
