package webhooksender_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/webhooksender"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/webhooktest"
)

const (
	secret     = "whsec_test_secret"
	publicName = "hooks.example-public.com"
	publicURL  = "https://" + publicName + "/earshot"
)

func message(url string) ports.WebhookMessage {
	return ports.WebhookMessage{
		URL:        url,
		Secret:     secret,
		DeliveryID: "dlv_1",
		Event:      core.EventMatchCreated,
		Body:       []byte(`{"id":"dlv_1","type":"match.created","createdAt":"2025-01-02T03:04:05Z","data":{}}`),
	}
}

// The address passes CheckWebhookURL, yet each private answer from DNS is
// refused at connect time.
func TestBlocksPrivateAddressesAtConnect(t *testing.T) {
	if _, err := core.CheckWebhookURL(publicURL, false); err != nil {
		t.Fatalf("the test address must pass the URL rules: %v", err)
	}
	for _, addr := range []string{
		"127.0.0.1",       // loopback
		"127.9.9.9",       // loopback, not the usual one
		"0.0.0.0",         // unspecified, reaches local services on Linux
		"10.0.0.1",        // private
		"172.16.0.1",      // private
		"192.168.1.1",     // private
		"169.254.169.254", // link-local, cloud metadata
		"100.64.0.1",      // shared CGNAT space
		"224.0.0.1",       // multicast
		"255.255.255.255", // broadcast
		"::1",             // IPv6 loopback
		"::",              // IPv6 unspecified
		"fd00::1",         // unique-local IPv6
		"fe80::1",         // link-local IPv6
		"ff02::1",         // multicast IPv6
		"::ffff:127.0.0.1",
		"::ffff:10.0.0.1",
		"64:ff9b::7f00:1", // NAT64 form of 127.0.0.1
	} {
		t.Run(addr, func(t *testing.T) {
			dns := newFakeDNS()
			dns.set(publicName, addr)
			s := webhooksender.New(webhooksender.Config{Resolver: dns.resolver(), Timeout: 2 * time.Second})
			r := s.Send(context.Background(), message(publicURL))
			if r.Error != webhooksender.ReasonBlocked || r.Status != 0 {
				t.Fatalf("Send to a name resolving to %s = %+v, want %s", addr, r, webhooksender.ReasonBlocked)
			}
			if dns.count() == 0 {
				t.Fatal("refused before resolving: the connect-time check was not exercised")
			}
		})
	}
}

// A name that resolves to several addresses is refused when every one is
// private, whichever the dialer tries first.
func TestBlocksMixedPrivateAnswers(t *testing.T) {
	dns := newFakeDNS()
	dns.set(publicName, "10.0.0.1", "127.0.0.1", "fd00::1")
	s := webhooksender.New(webhooksender.Config{Resolver: dns.resolver(), Timeout: 2 * time.Second})
	if r := s.Send(context.Background(), message(publicURL)); r.Error != webhooksender.ReasonBlocked {
		t.Fatalf("Send = %+v, want blocked", r)
	}
}

// DNS rebinding: the name looked public when it was checked, and points to
// loopback by the time the message is sent. The connect-time check sees
// the address actually dialled.
func TestBlocksDNSChangeBetweenCheckAndSend(t *testing.T) {
	dns := newFakeDNS()
	res := dns.resolver()
	dns.set(publicName, "1.1.1.1")

	// What a save-time check that resolves the name would have seen.
	addrs, err := res.LookupHost(context.Background(), publicName)
	if err != nil || len(addrs) != 1 || addrs[0] != "1.1.1.1" {
		t.Fatalf("check-time lookup = %v, %v", addrs, err)
	}
	seen := dns.count()

	dns.set(publicName, "127.0.0.1")
	s := webhooksender.New(webhooksender.Config{Resolver: res, Timeout: 2 * time.Second})
	if r := s.Send(context.Background(), message(publicURL)); r.Error != webhooksender.ReasonBlocked {
		t.Fatalf("Send after the DNS change = %+v, want blocked", r)
	}
	if dns.count() == seen {
		t.Fatal("the sender did not resolve the name again")
	}
}

func TestUnknownNameIsDNS(t *testing.T) {
	dns := newFakeDNS()
	s := webhooksender.New(webhooksender.Config{Resolver: dns.resolver(), Timeout: 2 * time.Second})
	if r := s.Send(context.Background(), message("https://nowhere.example-public.com/")); r.Error != webhooksender.ReasonDNS {
		t.Fatalf("Send = %+v, want dns", r)
	}
}

// Without AllowPrivate the address rules run again at send time: an
// address stored under looser rules is refused before any lookup.
func TestRechecksURLAtSend(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the receiver was reached")
	}))
	defer srv.Close()
	dns := newFakeDNS()
	s := webhooksender.New(webhooksender.Config{Resolver: dns.resolver(), Timeout: time.Second})
	for _, u := range []string{
		srv.URL,
		"https://127.0.0.1/",
		"https://localhost/",
		"https://app.nip.io/",
		"https://user:pw@" + publicName + "/",
		"https://" + publicName + ":8443/",
		"http://" + publicName + "/",
	} {
		if r := s.Send(context.Background(), message(u)); r.Error != webhooksender.ReasonBlocked {
			t.Errorf("Send(%s) = %+v, want blocked", u, r)
		}
	}
	if dns.count() != 0 {
		t.Errorf("%d lookups made for addresses the rules refuse", dns.count())
	}
}

// local returns a Sender for httptest servers on loopback.
func local(timeout time.Duration, now func() time.Time) *webhooksender.Sender {
	return webhooksender.New(webhooksender.Config{AllowPrivate: true, Timeout: timeout, Now: now})
}

func TestDeliversSignedMessage(t *testing.T) {
	now := time.Unix(1700000000, 0)
	m := message("")
	var got *http.Request
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Clone(context.Background())
		body, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	m.URL = srv.URL + "/hook?x=1"

	r := local(2*time.Second, func() time.Time { return now }).Send(context.Background(), m)
	if r.Error != "" || r.Status != http.StatusNoContent || !r.Delivered() || r.Duration <= 0 {
		t.Fatalf("Send = %+v", r)
	}
	if got.Method != http.MethodPost || got.URL.RequestURI() != "/hook?x=1" {
		t.Errorf("request %s %s", got.Method, got.URL.RequestURI())
	}
	if !bytes.Equal(body, m.Body) {
		t.Errorf("body %q, want %q", body, m.Body)
	}
	want := map[string]string{
		core.HeaderEvent:     core.EventMatchCreated,
		core.HeaderDelivery:  "dlv_1",
		core.HeaderTimestamp: "1700000000",
		core.HeaderSignature: core.Sign(secret, 1700000000, m.Body),
		"Content-Type":       "application/json",
		"User-Agent":         webhooksender.UserAgent,
		"Accept-Encoding":    "",
	}
	for k, v := range want {
		if g := got.Header.Get(k); g != v {
			t.Errorf("header %s = %q, want %q", k, g, v)
		}
	}
	if err := core.Verify(secret, got.Header.Get(core.HeaderSignature), got.Header.Get(core.HeaderTimestamp), body, now.Add(10*time.Second)); err != nil {
		t.Errorf("signature does not verify: %v", err)
	}
}

// Each send is signed with the time of that send, so a retry carries a
// fresh timestamp that receivers accept.
func TestSignsAfreshEachSend(t *testing.T) {
	var stamps []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		stamps = append(stamps, r.Header.Get(core.HeaderTimestamp))
		mu.Unlock()
	}))
	defer srv.Close()
	var clock atomic.Int64
	clock.Store(1700000000)
	s := local(2*time.Second, func() time.Time { return time.Unix(clock.Add(60), 0) })
	for range 2 {
		if r := s.Send(context.Background(), message(srv.URL)); !r.Delivered() {
			t.Fatalf("Send = %+v", r)
		}
	}
	if len(stamps) != 2 || stamps[0] != "1700000060" || stamps[1] != "1700000120" {
		t.Fatalf("timestamps %v", stamps)
	}
}

func TestStatusReasons(t *testing.T) {
	for _, c := range []struct {
		status int
		err    string
	}{
		{200, ""}, {201, ""}, {202, ""}, {299, ""},
		{400, "http 400"}, {404, "http 404"}, {410, "http 410"}, {429, "http 429"},
		{500, "http 500"}, {502, "http 502"}, {503, "http 503"},
		{301, "redirect"}, {302, "redirect"}, {304, "redirect"}, {307, "redirect"}, {308, "redirect"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(c.status)
		}))
		r := local(2*time.Second, nil).Send(context.Background(), message(srv.URL))
		srv.Close()
		if r.Status != c.status || r.Error != c.err {
			t.Errorf("answer %d: Send = %+v, want error %q", c.status, r, c.err)
		}
	}
}

func TestNeverFollowsRedirects(t *testing.T) {
	var followed atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) {
		followed.Add(1)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	r := local(2*time.Second, nil).Send(context.Background(), message(srv.URL+"/hook"))
	if r.Error != webhooksender.ReasonRedirect || r.Status != http.StatusTemporaryRedirect {
		t.Fatalf("Send = %+v, want redirect", r)
	}
	if followed.Load() != 0 {
		t.Fatal("the redirect was followed")
	}
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	const timeout = 200 * time.Millisecond
	r := local(timeout, nil).Send(context.Background(), message(srv.URL))
	if r.Error != webhooksender.ReasonTimeout || r.Status != 0 {
		t.Fatalf("Send = %+v, want timeout", r)
	}
	if r.Duration < timeout || r.Duration > timeout+time.Second {
		t.Fatalf("took %v with a %v timeout", r.Duration, timeout)
	}
}

func TestCallerCancel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The server notices a dropped connection only once the body is read.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if r := local(5*time.Second, nil).Send(ctx, message(srv.URL)); r.Error != webhooksender.ReasonCanceled {
		t.Fatalf("Send = %+v, want canceled", r)
	}
}

// An answer body that never ends is cut after 4 KB, long before the
// timeout, and the status stands.
func TestEndlessAnswerIsCut(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte("x"), 1024)
		w.WriteHeader(http.StatusOK)
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	r := local(3*time.Second, nil).Send(context.Background(), message(srv.URL))
	if !r.Delivered() {
		t.Fatalf("Send = %+v", r)
	}
	if r.Duration > time.Second {
		t.Fatalf("took %v: the body was not cut", r.Duration)
	}
}

// A body still trickling in when the time is up is abandoned at the
// timeout; the 2xx status already received decides.
func TestSlowAnswerBodyIsAbandonedAtTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte("a"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	const timeout = 200 * time.Millisecond
	r := local(timeout, nil).Send(context.Background(), message(srv.URL))
	if !r.Delivered() || r.Status != http.StatusAccepted {
		t.Fatalf("Send = %+v", r)
	}
	if r.Duration > timeout+time.Second {
		t.Fatalf("took %v with a %v timeout", r.Duration, timeout)
	}
}

// A compressed answer is never inflated: the sender does not ask for
// compression and reads the bytes as they come.
func TestGzipAnswerNotDecompressed(t *testing.T) {
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	_, _ = zw.Write(make([]byte, 4<<20)) // 4 MB of zeros, about 4 KB compressed
	_ = zw.Close()
	var askedFor atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		askedFor.Store(r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", strconv.Itoa(bomb.Len()))
		_, _ = w.Write(bomb.Bytes())
	}))
	defer srv.Close()
	r := local(3*time.Second, nil).Send(context.Background(), message(srv.URL))
	if !r.Delivered() {
		t.Fatalf("Send = %+v", r)
	}
	if a := askedFor.Load(); a != "" {
		t.Fatalf("Accept-Encoding %q sent", a)
	}
	if r.Duration > time.Second {
		t.Fatalf("took %v", r.Duration)
	}
}

func TestTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()

	// The test certificate is not trusted by default.
	if r := local(2*time.Second, nil).Send(context.Background(), message(srv.URL)); r.Error != webhooksender.ReasonTLS {
		t.Fatalf("Send to an untrusted certificate = %+v, want tls", r)
	}

	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	s := webhooksender.New(webhooksender.Config{AllowPrivate: true, Timeout: 2 * time.Second, TLSConfig: &tls.Config{RootCAs: roots}})
	if r := s.Send(context.Background(), message(srv.URL)); !r.Delivered() {
		t.Fatalf("Send with the certificate trusted = %+v", r)
	}
}

func TestConnectRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	if r := local(2*time.Second, nil).Send(context.Background(), message("http://"+addr+"/")); r.Error != webhooksender.ReasonConnect {
		t.Fatalf("Send = %+v, want connect", r)
	}
}

func TestConnectionDroppedWithoutAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = c.Close()
		}
	}))
	defer srv.Close()
	if r := local(2*time.Second, nil).Send(context.Background(), message(srv.URL)); r.Error != webhooksender.ReasonNetwork || r.Status != 0 {
		t.Fatalf("Send = %+v, want network", r)
	}
}

func TestRefusesHeaderInjection(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the receiver was reached")
	}))
	defer srv.Close()
	m := message(srv.URL)
	m.DeliveryID = "dlv_1\r\nX-Evil: 1"
	if r := local(time.Second, nil).Send(context.Background(), m); r.Error != webhooksender.ReasonBadMessage {
		t.Fatalf("Send = %+v, want invalid_message", r)
	}
}

func TestConcurrentSends(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
	}))
	defer srv.Close()
	s := local(2*time.Second, nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if r := s.Send(context.Background(), message(srv.URL)); !r.Delivered() {
				t.Errorf("Send = %+v", r)
			}
		})
	}
	wg.Wait()
	if n.Load() != 8 {
		t.Fatalf("%d messages arrived, want 8", n.Load())
	}
}

// The sender and the receiver kit agree: every header and the signature
// pass the receiver's checks, over http and https.
func TestWithReceiverKit(t *testing.T) {
	for _, secure := range []bool{false, true} {
		var r *webhooktest.Receiver
		if secure {
			r = webhooktest.NewTLSReceiver(t, secret)
		} else {
			r = webhooktest.NewReceiver(t, secret)
		}
		s := webhooksender.New(webhooksender.Config{AllowPrivate: true, Timeout: 2 * time.Second, TLSConfig: r.TLSConfig()})
		m := message(r.URL())
		if res := s.Send(context.Background(), m); !res.Delivered() {
			t.Fatalf("https %v: Send = %+v", secure, res)
		}
		got := r.WaitFor(1, time.Second)
		if len(got) != 1 || got[0].DeliveryID != m.DeliveryID || !bytes.Equal(got[0].Body, m.Body) {
			t.Fatalf("https %v: received %+v", secure, got)
		}
		r.SetStatus(http.StatusServiceUnavailable)
		if res := s.Send(context.Background(), m); res.Error != "http 503" {
			t.Fatalf("https %v: Send = %+v, want http 503", secure, res)
		}
	}
}
