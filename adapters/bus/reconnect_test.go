//go:build !race

// watermill-amqp's connection state is unsynchronised
// (ThreeDotsLabs/watermill#693), so under -race a broker disconnection is
// reported as a data race inside that library; this test runs without it.

package bus

import (
	"context"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/bustest"
)

// TestAMQPReconnect cuts the connections between the bus and the broker,
// as a broker restart does, without touching the broker itself (which
// other tests share): publishing fails while it is away, works again when
// it is back, and the subscription resumes on its own.
func TestAMQPReconnect(t *testing.T) {
	broker, err := url.Parse(amqpURL(t))
	if err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, broker.Host)
	viaProxy := *broker
	viaProxy.Host = p.addr()

	prefix := "earshot-test." + randomHex(t) + "."
	topic := bustest.Topic(t)
	t.Cleanup(func() {
		deleteObjects(t, broker.String(), prefix+topic, prefix+topic+"_"+DefaultGroup)
	})
	b := openBus(t, viaProxy.String(), Config{QueuePrefix: prefix})

	got := make(chan string, 10)
	err = b.Subscribe(t.Context(), topic, func(_ context.Context, e ports.Event) error {
		got <- e.Key
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	publishOK(t, b, topic, "before")
	expectKey(t, got, "before")

	start := time.Now()
	p.cut()
	// The client learns of the cut from the closed socket at once.
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := b.Publish(t.Context(), ports.Event{Topic: topic, Key: "during"})
		if err != nil {
			if !core.IsKind(err, core.KindUnavailable) {
				t.Fatalf("Publish while the broker is away: %v, want kind %v", err, core.KindUnavailable)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Publish kept succeeding with the broker away")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := b.Ping(t.Context()); !core.IsKind(err, core.KindUnavailable) {
		t.Errorf("Ping with the broker away: %v, want kind %v", err, core.KindUnavailable)
	}
	t.Logf("publish failed %v after the cut", time.Since(start).Round(time.Millisecond))

	// A few reconnect attempts fail meanwhile.
	for deadline := time.Now().Add(bustest.Wait); p.refusedCount() < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d reconnect attempts while the broker was away, want 2", p.refusedCount())
		}
	}
	p.restore()
	back := time.Now()
	for b.Ping(t.Context()) != nil {
		if time.Since(back) > bustest.Wait {
			t.Fatal("bus did not reconnect")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("reconnected %v after the broker came back", time.Since(back).Round(time.Millisecond))

	publishOK(t, b, topic, "after")
	// "during" may or may not have reached the broker before the cut was
	// noticed; "after" must arrive through the resumed subscription.
	expectKey(t, got, "after")
	t.Logf("subscription resumed %v after the broker came back", time.Since(back).Round(time.Millisecond))
}

func publishOK(t *testing.T, b *Bus, topic, key string) {
	t.Helper()
	if err := b.Publish(t.Context(), ports.Event{Topic: topic, Key: key, Payload: []byte(`{}`)}); err != nil {
		t.Fatalf("Publish %s: %v", key, err)
	}
}

func expectKey(t *testing.T, got <-chan string, key string) {
	t.Helper()
	timeout := time.After(bustest.Wait)
	for {
		select {
		case k := <-got:
			if k == key {
				return
			}
		case <-timeout:
			t.Fatalf("event %s not delivered", key)
		}
	}
}

// proxy forwards loopback TCP connections to target. cut closes every
// connection and refuses new ones until restore.
type proxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	down    bool
	conns   map[net.Conn]bool
	refused int // connections closed at once while down: reconnect attempts
}

// refusedCount is how many connections were refused while down.
func (p *proxy) refusedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}

func startProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() {
		_ = ln.Close()
		p.cut()
	})
	go p.serve()
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

func (p *proxy) forward(client net.Conn) {
	p.mu.Lock()
	down := p.down
	if down {
		p.refused++
	}
	p.mu.Unlock()
	if down {
		_ = client.Close()
		return
	}
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		_ = client.Close()
		return
	}
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		_ = client.Close()
		_ = server.Close()
		return
	}
	p.conns[client], p.conns[server] = true, true
	p.mu.Unlock()
	go pipe(client, server)
	pipe(server, client)
}

func pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
	_ = src.Close()
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		_ = c.Close()
		delete(p.conns, c)
	}
}

func (p *proxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}
