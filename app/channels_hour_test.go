package app

import (
	"context"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// An hour or a zone changed alone on a channel that is not daily would
// change nothing while the answer says it did: refused, the channel as
// it was. On a daily channel they change its hour; the dashboard's form,
// which sends the frequency with its hour and zone, is not refused.
func TestChannelHourAloneOnlyWhenDaily(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t)
	o := w.owner(t, "hour@example.com")
	c := newChans(t, w, nil)
	ch := c.add(t, o.ID, core.ChannelNtfy, 70, "hourly")
	nine, berlin := 9, "Europe/Berlin"
	for name, change := range map[string]ports.ChannelChange{
		"hour": {Hour: &nine},
		"zone": {Zone: &berlin},
	} {
		_, err := c.Update(ctx, o.ID, ch.ID, change)
		if !core.IsKind(err, core.KindInvalid) || !strings.Contains(core.Message(err), "daily") {
			t.Errorf("%s alone on an hourly channel: %v", name, err)
		}
	}
	if got, _ := c.Get(ctx, o.ID, ch.ID); got.Schedule != ch.Schedule {
		t.Fatalf("refused changes moved the schedule: %+v", got.Schedule)
	}

	hourly, zero, utc := "hourly", 0, ""
	if _, err := c.Update(ctx, o.ID, ch.ID, ports.ChannelChange{Frequency: &hourly, Hour: &zero, Zone: &utc}); err != nil {
		t.Fatalf("the dashboard's form: %v", err)
	}
	daily := "daily"
	if _, err := c.Update(ctx, o.ID, ch.ID, ports.ChannelChange{Frequency: &daily}); err != nil {
		t.Fatal(err)
	}
	up, err := c.Update(ctx, o.ID, ch.ID, ports.ChannelChange{Hour: &nine, Zone: &berlin})
	if err != nil || up.Schedule.Hour != 9 || up.Schedule.Zone != berlin {
		t.Fatalf("hour and zone of a daily channel: %+v, %v", up.Schedule, err)
	}
}
