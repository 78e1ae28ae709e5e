package webhooksender_test

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
)

// fakeDNS is a DNS server that lives in the test process. The resolver it
// hands out talks to it over in-memory pipes (DNS over a stream, with the
// two-byte length prefix), so no packet leaves the process and the test
// decides what every name resolves to, and can change it between lookups.
type fakeDNS struct {
	mu      sync.Mutex
	names   map[string][]netip.Addr
	queries int
}

func newFakeDNS() *fakeDNS { return &fakeDNS{names: map[string][]netip.Addr{}} }

// set makes name resolve to addrs from now on; no addrs means NXDOMAIN.
func (f *fakeDNS) set(name string, addrs ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(addrs) == 0 {
		delete(f.names, name)
		return
	}
	list := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		list[i] = netip.MustParseAddr(a)
	}
	f.names[name] = list
}

// count returns how many questions were answered so far.
func (f *fakeDNS) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queries
}

func (f *fakeDNS) resolver() *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(context.Context, string, string) (net.Conn, error) {
			client, server := net.Pipe()
			go f.serve(server)
			return client, nil
		},
	}
}

func (f *fakeDNS) serve(c net.Conn) {
	defer c.Close()
	for {
		var n [2]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return
		}
		q := make([]byte, binary.BigEndian.Uint16(n[:]))
		if _, err := io.ReadFull(c, q); err != nil {
			return
		}
		resp := f.answer(q)
		if resp == nil {
			return
		}
		out := binary.BigEndian.AppendUint16(nil, uint16(len(resp)))
		if _, err := c.Write(append(out, resp...)); err != nil {
			return
		}
	}
}

const (
	typeA    = 1
	typeAAAA = 28
)

// answer builds the reply to one query: the header, the question copied,
// and an A or AAAA record per address of the asked type.
func (f *fakeDNS) answer(q []byte) []byte {
	if len(q) < 12 {
		return nil
	}
	i := 12
	var labels []string
	for {
		if i >= len(q) {
			return nil
		}
		l := int(q[i])
		i++
		if l == 0 {
			break
		}
		if l&0xC0 != 0 || i+l > len(q) {
			return nil
		}
		labels = append(labels, string(q[i:i+l]))
		i += l
	}
	if i+4 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[i:])
	question := q[12 : i+4]
	name := strings.ToLower(strings.Join(labels, "."))

	f.mu.Lock()
	f.queries++
	addrs, known := f.names[name]
	f.mu.Unlock()

	var records []byte
	count := 0
	for _, a := range addrs {
		var rdata []byte
		switch {
		case qtype == typeA && a.Is4():
			rdata = a.AsSlice()
		case qtype == typeAAAA && a.Is6():
			rdata = a.AsSlice()
		default:
			continue
		}
		records = append(records, 0xC0, 12) // name: pointer to the question
		records = binary.BigEndian.AppendUint16(records, qtype)
		records = append(records, 0, 1, 0, 0, 0, 0) // class IN, TTL 0
		records = binary.BigEndian.AppendUint16(records, uint16(len(rdata)))
		records = append(records, rdata...)
		count++
	}

	rcode := byte(0)
	if !known {
		rcode = 3 // NXDOMAIN
	}
	h := []byte{q[0], q[1], 0x85, 0x80 | rcode, 0, 1} // response, authoritative, recursion desired and available
	h = binary.BigEndian.AppendUint16(h, uint16(count))
	h = append(h, 0, 0, 0, 0)
	return append(append(h, question...), records...)
}
