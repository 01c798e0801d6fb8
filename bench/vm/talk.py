# The talk's numbers, measured inside a guest (run as root): a Kafka-like
# listener (SO_RCVBUF = socket.receive.buffer.bytes = 102400, set before
# listen(), backlog 50) and a producer-like client on loopback, in a
# throw-away network namespace (run it as
# `unshare -n sh -c 'ip link set lo up && exec python3 talk.py ...'`:
# Debian 12's python3-minimal has no ctypes to unshare by itself), with
# net.ipv4.tcp_syncookies=2 (every connection completed by a SYN cookie:
# the state a SYN-queue overflow puts a broker's new connections in) and,
# as a control, tcp_syncookies=1 (a normal handshake: no cookie).
#
# Per trial it prints one JSON line: the window scale the client was told
# (client tcpi_snd_wscale) and the one the server uses (accepted socket's
# tcpi_rcv_wscale), and how long PAYLOAD bytes client -> listener took (cut
# at CAP seconds: then the bytes that arrived). Nothing is written to disk;
# the namespace dies with the process.
#
# Usage: python3 talk.py PAYLOAD_BYTES CAP_SECONDS TRIALS
# (Debian 12's python3-minimal has neither ctypes nor json: only the
# modules below, and JSON written by hand.)
import os
import socket
import sys
import threading
import time

TCP_INFO = 11


def sysctl(name, value):
    with open("/proc/sys/net/ipv4/" + name, "w") as f:
        f.write(value + "\n")


def counter(name):
    with open("/proc/net/netstat") as f:
        lines = f.read().splitlines()
    for i in range(0, len(lines) - 1, 2):
        h, v = lines[i].split(), lines[i + 1].split()
        if h[0] == "TcpExt:":
            return int(dict(zip(h[1:], v[1:])).get(name, -1))
    return -1


def wscale(sock):
    b = bytearray(sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 104))[6]
    return b & 0x0F, b >> 4


def trial(cookies, payload, cap):
    sysctl("tcp_syncookies", str(cookies))
    recv0 = counter("SyncookiesRecv")
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 102400)
    ls.bind(("127.0.0.1", 0))
    ls.listen(50)
    c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    c.settimeout(cap)
    c.connect(ls.getsockname())
    s, _ = ls.accept()
    told, used = wscale(c)[0], wscale(s)[1]
    got = [0]
    done = threading.Event()

    def rx():
        while got[0] < payload:
            b = s.recv(65536)
            if not b:
                break
            got[0] += len(b)
        done.set()

    t = threading.Thread(target=rx)
    t.daemon = True
    start = time.time()
    t.start()
    sender = threading.Thread(target=lambda: _send(c, payload))
    sender.daemon = True
    sender.start()
    done.wait(cap)
    secs = time.time() - start
    n = got[0]
    res = {"tcp_syncookies": cookies, "cookie_completed": counter("SyncookiesRecv") - recv0,
           "wscale_told": told, "wscale_used": used, "payload": payload, "arrived": n,
           "seconds": round(secs, 4), "bytes_per_s": int(n / secs) if secs > 0 else 0,
           "finished": n >= payload}
    for x in (c, s, ls):
        try:
            x.close()
        except OSError:
            pass
    return res


def _send(c, payload):
    try:
        c.sendall(b"k" * payload)
    except OSError:
        pass


def dumps(d):
    """One JSON object of str, bool, int and float values, keys sorted."""
    parts = []
    for k in sorted(d):
        v = d[k]
        if isinstance(v, bool):
            v = "true" if v else "false"
        elif isinstance(v, str):
            v = '"%s"' % v.replace("\\", "\\\\").replace('"', '\\"')
        else:
            v = repr(v)
        parts.append('"%s": %s' % (k, v))
    return "{" + ", ".join(parts) + "}"


def main():
    payload, cap, trials = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    # A fresh namespace has lo and the kernel's fallback tunnel devices
    # (sit0, tunl0, ... when IPv6 SIT or IPIP are built in), nothing else.
    tunnels = ("sit0", "tunl0", "ip6tnl0", "gre0", "gretap0", "erspan0", "ip6gre0", "ip_vti0", "ip6_vti0")
    with open("/proc/self/net/dev") as f:
        ifaces = [l.split(":")[0].strip() for l in f.read().splitlines()[2:]]
    if [i for i in ifaces if i not in tunnels] != ["lo"]:
        sys.exit("talk.py: run me in a throw-away network namespace (unshare -n)")
    sysctl("tcp_timestamps", "1")
    sysctl("tcp_window_scaling", "1")
    for i in range(trials):
        for cookies in (2, 1):
            r = trial(cookies, payload, cap)
            r["trial"] = i + 1
            r["kernel"] = os.uname().release
            print(dumps(r))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
