"""A headless Chromium driven over the DevTools protocol, for the report's browser tests.

Starting Chromium costs about two seconds and more than a second of CPU, so test_report
starts one per pytest session (per xdist worker) and opens each check's page in a new tab
of it, instead of a `chromium --dump-dom` per check. The browser is driven on a pipe
(--remote-debugging-pipe): it reads commands on its fd 3 and writes replies and events on
its fd 4, each message one JSON object ending in a NUL byte. The protocol is documented at
https://chromedevtools.github.io/devtools-protocol/.

Every wait has a deadline, and fails saying what it waited for; if Chromium dies, the
failure says so with the end of its log.
"""

from __future__ import annotations

import base64
import json
import os
import select
import signal
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

TIMEOUT = 60.0  # seconds, for any one reply or event

# The flags the tests gave every `chromium --dump-dom` run before: no sandbox (containers
# have no user namespaces), no GPU, nothing fetched from Google, a throwaway profile.
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--enable-logging=stderr", "--v=0", "--remote-debugging-pipe")

# subprocess can put a pipe only on fd 0, 1 or 2, and Chromium wants them on 3 and 4: a
# shell moves them there, then becomes Chromium (same pid).
MOVE_PIPES = 'exec 3<&0 4>&1 </dev/null >&2 && exec "$@"'


class BrowserError(Exception):
    """Chromium died, did not answer in time, or refused a command."""


class Timeout(BrowserError):
    """Chromium did not answer in time."""


class Browser:
    """A running Chromium: commands to it, its replies and the events of its open tabs."""

    def __init__(self, executable: str, workdir: Path) -> None:
        self.log = workdir / "chromium.log"
        commands, self._commands = os.pipe()
        self._replies, replies = os.pipe()
        with open(self.log, "wb") as log:
            # Its own process group, so that close() can end its helpers with it.
            self.proc = subprocess.Popen(
                ["/bin/sh", "-c", MOVE_PIPES, "sh", executable, *FLAGS,
                 f"--user-data-dir={workdir / 'profile'}", "about:blank"],
                stdin=commands, stdout=replies, stderr=log, start_new_session=True)
        # Chromium holds the other ends now: their closing tells us it has gone.
        os.close(commands)
        os.close(replies)
        self._next_id = 0
        self._buffer = b""
        self._sessions: Dict[str, List[dict]] = {}  # each open tab's events not yet read
        self._hung = ""  # what it did not answer, once it has not: then it is killed

    def close(self) -> None:
        """Ask Chromium to quit, kill it if it does not, and whatever it started with it."""
        try:
            if self.proc.poll() is None:
                self.send("Browser.close", timeout=10)
        except BrowserError:
            pass  # it went before answering, or did not answer: killed below
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self._kill()
        os.close(self._commands)
        os.close(self._replies)

    def send(self, method: str, params: Optional[dict] = None, session: Optional[str] = None,
             timeout: float = TIMEOUT) -> dict:
        """Run one command (in a tab's session, if given) and return its result."""
        if self._hung:
            raise BrowserError(f"chromium was stopped after it stopped answering: {self._hung}")
        self._next_id += 1
        message: Dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        try:
            os.write(self._commands, json.dumps(message).encode() + b"\0")
        except BrokenPipeError:
            raise BrowserError(self._gone(f"before {method}")) from None
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline, timeout, f"reply to {method}")
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method} failed: {reply['error']}")
                return reply["result"]
            self._queue(reply)

    def event(self, session: str, method: str, timeout: float = TIMEOUT,
              **match: Any) -> dict:
        """The params of the first event `method` of the tab whose params have `match`."""
        deadline = time.monotonic() + timeout
        pending = self._sessions[session]
        while True:
            for i, event in enumerate(pending):
                if event["method"] == "Inspector.targetCrashed":
                    raise BrowserError("the tab crashed")
                params = event.get("params", {})
                if event["method"] == method and all(params.get(k) == v
                                                     for k, v in match.items()):
                    del pending[i]
                    return params
            self._queue(self._read(deadline, timeout, f"{method} {match or ''}".strip()))

    def events(self, session: str, *methods: str) -> List[dict]:
        """The tab's events of those kinds that have come so far."""
        return [e["params"] for e in self._sessions[session] if e["method"] in methods]

    @contextmanager
    def tab(self, size: Tuple[int, int]) -> Iterator["Tab"]:
        """A new tab, showing about:blank in a window of `size` (width, height) pixels."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        try:
            session = self.send("Target.attachToTarget",
                                {"targetId": target, "flatten": True})["sessionId"]
            self._sessions[session] = []
            try:
                yield Tab(self, session, size)
            finally:
                del self._sessions[session]
        finally:
            # Best effort: a tab left open cannot change a check's result, and a failure
            # here must not hide the one that ended the check.
            if self.proc.poll() is None and not self._hung:
                try:
                    self.send("Target.closeTarget", {"targetId": target})
                except BrowserError:
                    pass

    def _kill(self) -> None:
        """Kill Chromium's process group (its renderers too), then reap it."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()

    def _queue(self, message: dict) -> None:
        # Events of closed tabs and of the browser itself are not waited for: dropped.
        if "method" in message and message.get("sessionId") in self._sessions:
            self._sessions[message["sessionId"]].append(message)

    def _read(self, deadline: float, timeout: float, waiting_for: str) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._replies], [], [], left)[0]:
                # A browser that hangs once would make every later check wait as long:
                # it is killed, and they fail at once.
                self._hung = f"no {waiting_for} within {timeout:g} s"
                self._kill()
                raise Timeout(f"chromium sent {self._hung}")
            data = os.read(self._replies, 1 << 20)
            if not data:
                raise BrowserError(self._gone(f"waiting for {waiting_for}"))
            self._buffer += data
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def _gone(self, when: str) -> str:
        try:
            status = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            status = "still running, pipe closed"
        tail = "\n".join(self.log.read_text(errors="replace").splitlines()[-20:])
        return f"chromium exited ({status}) {when}; the end of its log:\n{tail}"


class Tab:
    """One page: load a URL in it, wait for a condition, read its DOM, take a screenshot."""

    def __init__(self, browser: Browser, session: str, size: Tuple[int, int]) -> None:
        self.browser = browser
        self.session = session
        self.send("Page.enable")
        self.send("Page.setLifecycleEventsEnabled", {"enabled": True})
        self.send("Runtime.enable")
        # The page is laid out, and the screenshot taken, at exactly this size.
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": size[0], "height": size[1], "deviceScaleFactor": 1,
                   "mobile": False})

    def send(self, method: str, params: Optional[dict] = None) -> dict:
        return self.browser.send(method, params, self.session)

    def load(self, url: str) -> None:
        """Open `url` and wait for its load event (its scripts have run by then)."""
        navigation = self.send("Page.navigate", {"url": url})
        if "errorText" in navigation:
            raise BrowserError(f"could not open {url}: {navigation['errorText']}")
        # The load event of this document: the tab reports its about:blank's too, and
        # Page.loadEventFired does not say which document it is for.
        self.browser.event(self.session, "Page.lifecycleEvent", name="load",
                           loaderId=navigation["loaderId"])

    def errors(self) -> List[str]:
        """Every uncaught exception and console.error() of the page so far."""
        thrown = self.browser.events(self.session, "Runtime.exceptionThrown")
        logged = [e for e in self.browser.events(self.session, "Runtime.consoleAPICalled")
                  if e["type"] == "error"]
        return ([describe(e["exceptionDetails"]) for e in thrown] +
                ["console.error: " + " ".join(str(a.get("value", a.get("description", "")))
                                              for a in e["args"]) for e in logged])

    def evaluate(self, expression: str, timeout: float = TIMEOUT) -> Any:
        """The value of a JavaScript expression in the page; a promise is waited for."""
        reply = self.browser.send("Runtime.evaluate",
                                  {"expression": expression, "returnByValue": True,
                                   "awaitPromise": True}, self.session, timeout)
        if "exceptionDetails" in reply:
            raise BrowserError(f"{expression} threw: {describe(reply['exceptionDetails'])}")
        return reply["result"].get("value")

    def wait_until(self, condition: str, timeout: float = TIMEOUT) -> None:
        """Wait until the JavaScript `condition` holds, trying it again whenever the document
        changes. An exception the page has thrown fails it at once: that is the usual reason
        for a condition never to hold, and its message says more than a timeout."""
        errors = self.errors()
        if errors:
            raise BrowserError("the page's script failed:\n" + "\n".join(errors))
        # The page gives up by itself (it answers false), so that a page that is never
        # ready fails this check alone: a browser that does not answer at all is killed.
        script = ("new Promise((resolve) => {"
                  f" const end = setTimeout(() => {{ seen.disconnect(); resolve(false); }},"
                  f" {int(timeout * 1000)});"
                  f" const check = () => {{ if ({condition}) {{"
                  " clearTimeout(end); seen.disconnect(); resolve(true); } };"
                  " const seen = new MutationObserver(check);"
                  " seen.observe(document, {attributes: true, childList: true, subtree: true});"
                  " check(); })")
        if not self.evaluate(script, timeout + TIMEOUT):
            raise Timeout(f"{condition} was still false after {timeout:g} s")

    def dom(self) -> str:
        """The document as it is now, as --dump-dom printed it (less its doctype line)."""
        return self.evaluate("document.documentElement.outerHTML")

    def screenshot(self, path: Path) -> None:
        """A PNG of the window, exactly the tab's size."""
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        path.write_bytes(base64.b64decode(data))


def describe(details: dict) -> str:
    """An exception as the console shows it: where, and its message."""
    where = f"{details.get('url', '')}:{details.get('lineNumber', 0) + 1}"
    what = details.get("exception", {}).get("description")
    return f"{where}: {details['text']} {what}" if what else f"{where}: {details['text']}"
