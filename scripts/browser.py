#!/usr/bin/env python3
"""Drive headless Chromium over the DevTools protocol and report what a page did.

    browser.py PAGE [--width W] [--height H] ACTION...

Chromium is started with `--remote-debugging-pipe` (the protocol's JSON messages on file
descriptors 3 and 4, NUL-separated: no websocket library needed) and a real clock (no
virtual time, so `requestAnimationFrame` runs at the pace the page can draw). The script
waits until `document.body.dataset.status` leaves "loading", then runs the actions in order
and prints one JSON object: {"status": ..., "results": [...]}, one result per action:

    eval:EXPR            the value of the JavaScript expression (promises awaited)
    drag:X0,Y0,X1,Y1[,N] a left-button drag in CSS pixels, in N mouse moves (default 10),
                         each sent when Chromium has taken the last
    dblclick:X,Y         a double click
    wheel:X,Y,DY         a mouse-wheel turn (DY > 0 scrolls down)

Used by the tests (Tests/*/TestSupport.swift) and scripts/bench-view.sh; it needs only
Debian's `chromium` and the Python standard library.
"""
import json
import os
import subprocess
import sys
import tempfile
import time


class Browser:
    def __init__(self, page, width, height):
        self.profile = tempfile.TemporaryDirectory(prefix="depthpose-chromium-")
        to_chromium_r, self.to_chromium = os.pipe()
        self.from_chromium, from_chromium_w = os.pipe()
        # the pipes must land on fds 3 and 4 in the child (os.pipe's fds are not inherited;
        # dup2's copies are, and close_fds=False keeps them past the exec)
        def wire():
            a, b = os.dup(to_chromium_r), os.dup(from_chromium_w)  # out of the way of 3 and 4
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)
        self.process = subprocess.Popen(
            ["chromium", "--headless", "--no-sandbox", "--hide-scrollbars", "--remote-debugging-pipe",
             "--no-first-run", "--user-data-dir=" + self.profile.name, f"--window-size={width},{height}", "about:blank"],
            preexec_fn=wire, close_fds=False,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chromium_r)
        os.close(from_chromium_w)
        self.buffer = b""
        self.next_id = 0
        self.console_errors = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Runtime.enable", session=True)
        self.call("Page.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height, deviceScaleFactor=1, mobile=False)
        self.call("Page.navigate", session=True, url=page)

    def send(self, method, session, params):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self.to_chromium, json.dumps(message).encode() + b"\0")
        return self.next_id

    def receive(self):
        while b"\0" not in self.buffer:
            chunk = os.read(self.from_chromium, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\0", 1)
        message = json.loads(raw)
        if message.get("method") == "Runtime.exceptionThrown":
            self.console_errors.append(message["params"]["exceptionDetails"].get("exception", {}).get("description", "exception"))
        elif message.get("method") == "Runtime.consoleAPICalled" and message["params"]["type"] == "error":
            self.console_errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in message["params"]["args"]))
        return message

    def call(self, method, session=False, **params):
        wanted = self.send(method, session, params)
        while True:
            message = self.receive()
            if message.get("id") == wanted:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", session=True, expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails'].get('exception', {}).get('description', result['exceptionDetails'])}")
        return result["result"].get("value")

    def mouse(self, kind, x, y, **extra):
        self.call("Input.dispatchMouseEvent", session=True, type=kind, x=x, y=y, **extra)

    def close(self):
        try:
            self.call("Browser.close")
        except Exception:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.profile.cleanup()


def main():
    args = sys.argv[1:]
    width, height = 1280, 800
    while args and args[0] in ("--width", "--height"):
        if args[0] == "--width":
            width = int(args[1])
        else:
            height = int(args[1])
        args = args[2:]
    if not args:
        sys.exit(__doc__)
    page, actions = args[0], args[1:]
    if "://" not in page:
        page = "file://" + os.path.abspath(page)
    browser = Browser(page, width, height)
    try:
        deadline = time.time() + 60
        status = "loading"
        while time.time() < deadline:
            status = browser.evaluate("document.body ? (document.body.dataset.status || '(no data-status)') : 'loading'")
            if status != "loading":
                break
            time.sleep(0.05)
        results = []
        for action in actions:
            kind, _, rest = action.partition(":")
            if kind == "eval":
                results.append(browser.evaluate(rest))
                continue
            numbers = [float(v) for v in rest.split(",")]
            if kind == "drag":
                x0, y0, x1, y1 = numbers[:4]
                steps = int(numbers[4]) if len(numbers) > 4 else 10
                browser.mouse("mouseMoved", x0, y0)
                browser.mouse("mousePressed", x0, y0, button="left", buttons=1, clickCount=1)
                for k in range(1, steps + 1):
                    browser.mouse("mouseMoved", x0 + (x1 - x0) * k / steps, y0 + (y1 - y0) * k / steps, button="left", buttons=1)
                browser.mouse("mouseReleased", x1, y1, button="left", buttons=0, clickCount=1)
            elif kind == "dblclick":
                x, y = numbers
                for count in (1, 2):
                    browser.mouse("mousePressed", x, y, button="left", buttons=1, clickCount=count)
                    browser.mouse("mouseReleased", x, y, button="left", buttons=0, clickCount=count)
            elif kind == "wheel":
                x, y, dy = numbers
                browser.mouse("mouseWheel", x, y, deltaX=0, deltaY=dy)
            else:
                sys.exit(f"unknown action {action!r}")
            results.append(None)
        print(json.dumps({"status": status, "consoleErrors": browser.console_errors, "results": results}))
    finally:
        browser.close()


if __name__ == "__main__":
    main()
