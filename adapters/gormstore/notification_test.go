package gormstore

import (
	"context"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// A claim hands the owed emails out oldest first, as the port says,
// also when some of them were claimed before and their lease ran out:
// an update moves a row on Postgres, and RETURNING gives the rows in
// the order the update met them.
func TestClaimEmailsOldestFirst(t *testing.T) {
	for name, url := range dialects(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db := openMigrated(t, url)
			o := testOwner(t, db, "claims-"+newID()+"@example.com")
			s := NewNotificationStore(db)
			var want []string
			for range 5 {
				n := core.Notification{OwnerID: o.ID, Kind: core.NotifyAccountHealth, Title: "t", Message: "m", Email: true}
				if err := s.AddNotification(ctx, &n); err != nil {
					t.Fatal(err)
				}
				want = append(want, n.ID)
			}
			// The two oldest claimed with a lease that runs out at once.
			if ns, err := s.ClaimEmails(ctx, 2, -time.Second); err != nil || len(ns) != 2 {
				t.Fatalf("first claim: %d, %v", len(ns), err)
			}
			ns, err := s.ClaimEmails(ctx, 100, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range ns {
				got = append(got, n.ID)
			}
			if len(got) != len(want) {
				t.Fatalf("claimed %v, want %v", got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("claimed %v, want oldest first %v", got, want)
				}
			}
		})
	}
}
