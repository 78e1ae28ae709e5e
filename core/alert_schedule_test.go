package core

import (
	"testing"
	"time"
	_ "time/tzdata" // the zones below load on hosts without a zone database
)

func TestNewAlertSchedule(t *testing.T) {
	for _, c := range []struct {
		freq string
		hour int
		zone string
		ok   bool
		want AlertSchedule
	}{
		{"", 0, "", true, AlertSchedule{Frequency: AlertAtOnce}},
		{"at once", 5, "Nowhere/Else", true, AlertSchedule{Frequency: AlertAtOnce}},
		{"hourly", 0, "", true, AlertSchedule{Frequency: AlertHourly}},
		{"off", 0, "", true, AlertSchedule{Frequency: AlertOff}},
		{"daily", 9, "Europe/Berlin", true, AlertSchedule{AlertDaily, 9, "Europe/Berlin"}},
		{"daily", 0, "+05:30", true, AlertSchedule{AlertDaily, 0, "+05:30"}},
		{"daily", 23, "-08:00", true, AlertSchedule{AlertDaily, 23, "-08:00"}},
		{"daily", 7, "", true, AlertSchedule{AlertDaily, 7, ""}},
		{"daily", 24, "", false, AlertSchedule{}},
		{"daily", -1, "", false, AlertSchedule{}},
		{"daily", 9, "Local", false, AlertSchedule{}},
		{"daily", 9, "Nowhere/Else", false, AlertSchedule{}},
		{"daily", 9, "../../etc/passwd", false, AlertSchedule{}},
		{"daily", 9, "+5:30", false, AlertSchedule{}},
		{"daily", 9, "+15:00", false, AlertSchedule{}},
		{"weekly", 0, "", false, AlertSchedule{}},
	} {
		got, err := NewAlertSchedule(c.freq, c.hour, c.zone)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("NewAlertSchedule(%q, %d, %q) = %+v, %v", c.freq, c.hour, c.zone, got, err)
		}
		if err != nil && !IsKind(err, KindInvalid) {
			t.Errorf("NewAlertSchedule(%q, %d, %q): %v is not invalid", c.freq, c.hour, c.zone, err)
		}
	}
}

func TestAlertScheduleDue(t *testing.T) {
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	var never time.Time
	daily9Berlin := AlertSchedule{AlertDaily, 9, "Europe/Berlin"} // 08:00 UTC in winter, 07:00 in summer
	for _, c := range []struct {
		name      string
		s         AlertSchedule
		now, last time.Time
		want      bool
	}{
		{"zero value is at once", AlertSchedule{}, at("2026-01-10T10:00:00Z"), at("2026-01-10T09:59:00Z"), true},
		{"at once", AlertSchedule{Frequency: AlertAtOnce}, at("2026-01-10T10:00:00Z"), at("2026-01-10T10:00:00Z"), true},
		{"off never", AlertSchedule{Frequency: AlertOff}, at("2026-01-10T10:00:00Z"), never, false},
		{"hourly first", AlertSchedule{Frequency: AlertHourly}, at("2026-01-10T10:00:00Z"), never, true},
		{"hourly 59 min", AlertSchedule{Frequency: AlertHourly}, at("2026-01-10T10:59:59Z"), at("2026-01-10T10:00:00Z"), false},
		{"hourly 60 min", AlertSchedule{Frequency: AlertHourly}, at("2026-01-10T11:00:00Z"), at("2026-01-10T10:00:00Z"), true},
		{"daily before the hour, sent yesterday after it", daily9Berlin, at("2026-01-10T07:59:00Z"), at("2026-01-09T08:00:00Z"), false},
		{"daily at the hour", daily9Berlin, at("2026-01-10T08:00:00Z"), at("2026-01-09T08:00:00Z"), true},
		{"daily after the hour, sent already", daily9Berlin, at("2026-01-10T20:00:00Z"), at("2026-01-10T08:01:00Z"), false},
		{"daily missed hour goes at next sweep", daily9Berlin, at("2026-01-10T13:00:00Z"), at("2026-01-09T08:00:00Z"), true},
		{"daily in summer time", daily9Berlin, at("2026-07-10T07:00:00Z"), at("2026-07-09T07:00:00Z"), true},
		{"daily in summer time, an hour early in UTC terms", daily9Berlin, at("2026-07-10T06:59:00Z"), at("2026-07-09T07:00:00Z"), false},
		{"daily offset crossing midnight UTC", AlertSchedule{AlertDaily, 1, "+05:30"}, at("2026-01-09T19:30:00Z"), at("2026-01-08T19:30:00Z"), true},
		{"daily offset an instant before", AlertSchedule{AlertDaily, 1, "+05:30"}, at("2026-01-09T19:29:59Z"), at("2026-01-08T19:30:00Z"), false},
		{"daily never sent, before the hour", AlertSchedule{AlertDaily, 9, ""}, at("2026-01-10T08:59:00Z"), never, false},
		{"daily never sent, within the hour", AlertSchedule{AlertDaily, 9, ""}, at("2026-01-10T09:59:00Z"), never, true},
		{"daily never sent, after the hour", AlertSchedule{AlertDaily, 9, ""}, at("2026-01-10T10:00:00Z"), never, false},
		{"daily zone that does not load: UTC, before", AlertSchedule{AlertDaily, 9, "Nowhere/Else"}, at("2026-01-10T08:59:00Z"), at("2026-01-09T09:00:00Z"), false},
		{"daily zone that does not load: UTC, at", AlertSchedule{AlertDaily, 9, "Nowhere/Else"}, at("2026-01-10T09:00:00Z"), at("2026-01-09T09:00:00Z"), true},
	} {
		if got := c.s.Due(c.now, c.last); got != c.want {
			t.Errorf("%s: Due(%v, %v) = %v", c.name, c.now, c.last, got)
		}
	}
}

// Moving a clock minute by minute over three days, a daily schedule is
// due exactly once a day, at the chosen hour, across a change of clocks.
func TestAlertScheduleDailyOnceADay(t *testing.T) {
	s := AlertSchedule{AlertDaily, 2, "Europe/Berlin"} // 29 March 2026 skips 02:00
	start := time.Date(2026, 3, 27, 12, 0, 0, 0, time.UTC)
	var last time.Time
	var sent []time.Time
	for now := start; now.Before(start.Add(72 * time.Hour)); now = now.Add(time.Minute) {
		if s.Due(now, last) {
			sent = append(sent, now)
			last = now
		}
	}
	if len(sent) != 3 { // the next three mornings
		t.Fatalf("sent at %v", sent)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	for _, at := range sent {
		if h := at.In(berlin).Hour(); h != 2 && !(at.In(berlin).Day() == 29 && h == 3) {
			t.Fatalf("sent at %v (%v in Berlin)", at, at.In(berlin))
		}
	}
}

// An offset's hours and minutes are two digits each: a second sign inside
// them is no offset, and would be read as another one (+-5:30 as -04:30).
func TestAlertZoneOffsetDigitsOnly(t *testing.T) {
	for _, zone := range []string{"+-5:30", "++5:30", "-+1:00", "+05:-3", "+05:+3"} {
		if s, err := NewAlertSchedule("daily", 9, zone); err == nil {
			t.Errorf("NewAlertSchedule(daily, 9, %q) = %+v, want refused", zone, s)
		}
	}
}

// West of UTC, time.Date reads an hour the clocks skip as the hour
// before: New York's 02:00 on the day of the spring change would be
// 01:00 EST. The digest goes out when the clocks reach the chosen hour,
// at the change (03:00 EDT), never before it.
func TestAlertScheduleDailySkippedHourWestOfUTC(t *testing.T) {
	s := AlertSchedule{AlertDaily, 2, "America/New_York"} // 8 March 2026 skips 02:00
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	last := time.Date(2026, 3, 7, 2, 0, 0, 0, ny) // yesterday's digest
	for _, c := range []struct {
		now  time.Time
		want bool
	}{
		{time.Date(2026, 3, 8, 1, 0, 0, 0, ny), false},  // 06:00Z, 01:00 EST: before the hour
		{time.Date(2026, 3, 8, 1, 59, 0, 0, ny), false}, // 06:59Z
		{time.Date(2026, 3, 8, 3, 0, 0, 0, ny), true},   // 07:00Z, the change: 03:00 EDT
	} {
		if got := s.Due(c.now, last); got != c.want {
			t.Errorf("Due(%v) = %v, want %v", c.now, got, c.want)
		}
	}
	if got := s.Due(time.Date(2026, 3, 8, 1, 30, 0, 0, ny), time.Time{}); got {
		t.Errorf("never emailed: due at 01:30 EST, an hour before the chosen one")
	}
	if got := s.Due(time.Date(2026, 3, 8, 3, 30, 0, 0, ny), time.Time{}); !got {
		t.Errorf("never emailed: not due at 03:30 EDT, within the hour after the change")
	}
}
