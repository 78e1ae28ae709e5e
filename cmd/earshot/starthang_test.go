package main

import (
	"bufio"
	"bytes"
	be "encoding/binary"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/earshothq/earshot/testkit/logtest"
)

// A signal that arrives while the start is held by a peer that does not
// answer ends the process within the stop bound, whichever step holds
// it: a broker or a database that accepts the connection and then says
// nothing holds the connecting (before the start proper), a broker that
// opens the connection and then never answers a channel's opening holds
// the start's subscription.
func TestSignalDuringAStartThatHangs(t *testing.T) {
	t.Parallel()
	t.Run("broker silent after accepting", func(t *testing.T) {
		t.Parallel()
		peer := silentPeer(t)
		hung := startHung(t, peer.held, "EARSHOT_BUS_URL=amqp://guest:guest@"+peer.addr+"/")
		hung.wantStopped(t)
	})
	t.Run("postgres silent after accepting", func(t *testing.T) {
		t.Parallel()
		peer := silentPeer(t)
		hung := startHung(t, peer.held, "EARSHOT_DATABASE_URL=postgres://earshot@"+peer.addr+"/earshot?sslmode=disable")
		hung.wantStopped(t)
	})
	t.Run("broker silent on the subscription", func(t *testing.T) {
		t.Parallel()
		broker := os.Getenv("EARSHOT_TEST_AMQP_URL")
		if broker == "" {
			t.Skip("EARSHOT_TEST_AMQP_URL is unset: the stalled subscription case needs a broker")
		}
		u, err := url.Parse(broker)
		if err != nil {
			t.Fatal(err)
		}
		p := stallingBroker(t, u.Host)
		u.Host = p.addr
		hung := startHung(t, p.held, "EARSHOT_BUS_URL="+u.String(), "EARSHOT_BUS_PREFIX=hang-"+randomHex(t)+".")
		hung.wantStopped(t)
		// The start got as far as the subscription, so the stop of what
		// had started ran: the bus's, which says it leaves the connection
		// the subscription waits on to the process's exit.
		if !strings.Contains(hung.logs.String(), "a subscription still waits for the broker") {
			t.Errorf("the bus's stop did not run:\n%s", hung.logs)
		}
	})
}

// hungServe is an `earshot serve` held in its start.
type hungServe struct {
	cmd      *exec.Cmd
	logs     *logtest.Buffer
	done     chan error
	signaled time.Time
}

// startHung runs serve with env added to the base environment, waits
// until held is closed (the peer holds it) and sends SIGTERM.
func startHung(t *testing.T, held <-chan struct{}, env ...string) *hungServe {
	t.Helper()
	h := &hungServe{logs: &logtest.Buffer{}, done: make(chan error, 1)}
	h.cmd = exec.Command(binary, "serve")
	h.cmd.Env = append(baseEnv(t.TempDir()), env...)
	h.cmd.Stdout = io.Discard
	h.cmd.Stderr = h.logs
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { h.done <- h.cmd.Wait() }()
	t.Cleanup(func() {
		if h.cmd.ProcessState == nil {
			_ = h.cmd.Process.Kill()
			<-h.done
		}
	})
	select {
	case <-held:
	case err := <-h.done:
		t.Fatalf("serve exited before the peer held it: %v\n%s", err, h.logs)
	case <-time.After(60 * time.Second):
		t.Fatalf("the peer saw no connection within 60 s\n%s", h.logs)
	}
	h.signaled = time.Now()
	if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	return h
}

// wantStopped waits for the exit and checks it came within the stop
// bound, with status 0: the operator asked for the stop and got it, as
// after a finished start (docs/operating.md).
func (h *hungServe) wantStopped(t *testing.T) {
	t.Helper()
	select {
	case err := <-h.done:
		took := time.Since(h.signaled)
		t.Logf("exit %v %v after SIGTERM; logs:\n%s", err, took.Round(time.Millisecond), h.logs)
		if took > stopBound {
			t.Errorf("serve took %v to exit after SIGTERM, past the %v stop bound", took.Round(time.Millisecond), stopBound)
		}
		if err != nil {
			t.Errorf("serve exited with %v after SIGTERM during its start, want status 0; logs:\n%s", err, h.logs)
		}
	case <-time.After(2*stopBound + 30*time.Second):
		t.Fatalf("serve did not exit within %v of SIGTERM; logs:\n%s", 2*stopBound+30*time.Second, h.logs)
	}
}

// peer is a loopback TCP listener; held is closed once it holds a
// connection.
type peer struct {
	addr string
	held chan struct{}
	once sync.Once
}

func (p *peer) hold() { p.once.Do(func() { close(p.held) }) }

// listenPeer listens on loopback for a peer; keep holds the connections
// it makes, which are closed with the listener when t ends.
func listenPeer(t *testing.T) (net.Listener, *peer, func(...net.Conn)) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	keep := func(c ...net.Conn) {
		mu.Lock()
		defer mu.Unlock()
		conns = append(conns, c...)
	}
	return ln, &peer{addr: ln.Addr().String(), held: make(chan struct{})}, keep
}

// silentPeer accepts connections and never writes: a broker or database
// whose port is open and whose process is hung (or a firewall that
// answers the handshake and drops what follows).
func silentPeer(t *testing.T) *peer {
	t.Helper()
	ln, p, keep := listenPeer(t)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			keep(c)
			// Read what the client sends, so it is not held by a full
			// buffer but by the missing answer.
			go func() { _, _ = io.Copy(io.Discard, c) }()
			p.hold()
		}
	}()
	return p
}

// stallingBroker is a proxy to the AMQP broker at target that passes
// everything until serve's consuming connection (named "earshot
// consume" in its Connection.StartOk) opens a channel; from then on it
// passes only that connection's heartbeats, both ways, so the broker
// never sees the Channel.Open and the client never gets an answer nor
// a reason to give up. Frames as AMQP 0-9-1 section 4.2.3 lays them
// out: type, channel, size, payload, 0xCE.
func stallingBroker(t *testing.T, target string) *peer {
	t.Helper()
	return proxyPeer(t, target, (*peer).forwardUntilChannelOpen)
}

// proxyPeer is a proxy to target: for each connection c it accepts, it
// dials target as b, copies b's answers to c as they are, and leaves
// what c sends to forward.
func proxyPeer(t *testing.T, target string, forward func(p *peer, c, b net.Conn)) *peer {
	t.Helper()
	ln, p, keep := listenPeer(t)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			keep(c, b)
			go func() { _, _ = io.Copy(c, b) }()
			go forward(p, c, b)
		}
	}()
	return p
}

// forwardUntilChannelOpen copies the client's frames from c to b until
// the consuming connection's first Channel.Open; it then drops all but
// heartbeats.
func (p *peer) forwardUntilChannelOpen(c, b net.Conn) {
	r := bufio.NewReader(c)
	header := make([]byte, 8) // "AMQP" 0 0 9 1
	if _, err := io.ReadFull(r, header); err != nil {
		return
	}
	if _, err := b.Write(header); err != nil {
		return
	}
	consume, stalled := false, false
	for {
		head := make([]byte, 7)
		if _, err := io.ReadFull(r, head); err != nil {
			return
		}
		size := be.BigEndian.Uint32(head[3:])
		if size > 1<<20 {
			return
		}
		rest := make([]byte, size+1)
		if _, err := io.ReadFull(r, rest); err != nil {
			return
		}
		frame := append(head, rest...)
		if bytes.Contains(rest, []byte("earshot consume")) {
			consume = true
		}
		const method, heartbeat = 1, 8
		if consume && head[0] == method && size >= 4 &&
			be.BigEndian.Uint16(rest[0:]) == 20 && be.BigEndian.Uint16(rest[2:]) == 10 {
			stalled = true
			p.hold()
		}
		if stalled && head[0] != heartbeat {
			continue
		}
		if _, err := b.Write(frame); err != nil {
			return
		}
	}
}
