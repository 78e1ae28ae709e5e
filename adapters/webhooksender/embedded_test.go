package webhooksender_test

import (
	"context"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/webhooksender"
)

// IPv6 forms that carry an IPv4 address, and the remaining reserved
// IPv4 blocks, are refused at connect time like the plain private
// addresses of TestBlocksPrivateAddressesAtConnect: a name whose AAAA
// record embeds loopback or a private address reaches it through a
// translator or the kernel just the same. Nothing is dialled: the
// check refuses before the socket connects.
func TestBlocksEmbeddedAndReservedAddresses(t *testing.T) {
	for _, addr := range []string{
		"::7f00:1",                             // IPv4-compatible 127.0.0.1 (deprecated, RFC 4291 2.5.5.1)
		"::ffff:169.254.169.254",               // v4-mapped cloud metadata
		"::ffff:0.0.0.0",                       // v4-mapped unspecified
		"64:ff9b::a9fe:a9fe",                   // NAT64 of 169.254.169.254 (RFC 6052)
		"64:ff9b:1::a00:1",                     // local-use NAT64 of 10.0.0.1 (RFC 8215)
		"2002:7f00:1::1",                       // 6to4 of 127.0.0.1 (RFC 3056)
		"2001:0:4136:e378:8000:63bf:80ff:fffe", // Teredo (RFC 4380), 127.0.0.1 as the client
		"0.1.2.3",                              // "this network" beyond 0.0.0.0
		"192.0.0.170",                          // IETF protocol assignments (NAT64 discovery)
		"198.18.0.1",                           // benchmarking
		"240.0.0.1",                            // reserved
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
