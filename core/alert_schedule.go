package core

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// AlertFrequency is how often an owner's alert emails may go out.
type AlertFrequency string

// The frequencies an owner picks from. AlertAtOnce, the default, is the
// email sent at every sweep that finds new matches.
const (
	AlertAtOnce AlertFrequency = "at once"
	AlertHourly AlertFrequency = "hourly"
	AlertDaily  AlertFrequency = "daily"
	AlertOff    AlertFrequency = "off"
)

// AlertSchedule is an owner's choice of when alert emails go out. The
// zero value is AlertAtOnce.
type AlertSchedule struct {
	Frequency AlertFrequency
	// Hour (0-23) in Zone is when a daily digest goes out.
	Hour int
	// Zone is an IANA zone name such as Europe/Berlin, or an offset
	// from UTC such as +05:30; empty means UTC.
	Zone string
}

// NewAlertSchedule validates a frequency and, for a daily digest, its
// hour and zone. An empty frequency is AlertAtOnce.
func NewAlertSchedule(frequency string, hour int, zone string) (AlertSchedule, error) {
	s := AlertSchedule{Frequency: AlertFrequency(strings.TrimSpace(frequency))}
	switch s.Frequency {
	case "":
		s.Frequency = AlertAtOnce
	case AlertAtOnce, AlertHourly, AlertOff:
	case AlertDaily:
		if hour < 0 || hour > 23 {
			return AlertSchedule{}, Errorf(KindInvalid, "hour must be 0 to 23")
		}
		zone = strings.TrimSpace(zone)
		if _, err := alertZone(zone); err != nil {
			return AlertSchedule{}, err
		}
		s.Hour, s.Zone = hour, zone
	default:
		return AlertSchedule{}, Errorf(KindInvalid, "frequency must be one of at once, hourly, daily, off")
	}
	return s, nil
}

// alertZone reads a zone: empty or UTC, an offset ±hh:mm, or an IANA
// name. Local is refused: it would be the server's zone, not the owner's.
func alertZone(zone string) (*time.Location, error) {
	bad := Errorf(KindInvalid, "time zone must be a name such as Europe/Berlin or an offset such as +05:30")
	if zone == "" || zone == "UTC" {
		return time.UTC, nil
	}
	if zone[0] == '+' || zone[0] == '-' {
		h, m, ok := strings.Cut(zone[1:], ":")
		hh, err1 := strconv.Atoi(h)
		mm, err2 := strconv.Atoi(m)
		// Atoi takes a sign: digitsOnly keeps a second one out of the parts.
		if !ok || len(h) != 2 || len(m) != 2 || !digitsOnly(h) || !digitsOnly(m) || err1 != nil || err2 != nil || hh > 14 || mm > 59 {
			return nil, bad
		}
		off := hh*3600 + mm*60
		if zone[0] == '-' {
			off = -off
		}
		return time.FixedZone("UTC"+zone, off), nil
	}
	if zone == "Local" || strings.ContainsAny(zone, " .\\") {
		return nil, bad
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return nil, bad
	}
	return loc, nil
}

// Due reports whether an email may go out at now to an owner whose last
// alert email went out at last (zero: never). At once is always due;
// hourly is due an hour after the last; daily is due once the latest
// chosen hour has passed since the last, so a digest missed while the
// service was down goes out at the next sweep, but an owner never
// emailed gets the first one within the chosen hour, not at once; off is
// never due.
//
// A last more than clockSkew ahead of now was stamped by a clock that
// was wrong: it says an email went out, not when, and is read as none,
// so the schedule goes on from the present instead of waiting for the
// clock to pass the stamp. Hourly is then due at once, daily within the
// next chosen hour. The caller keeps the time of an email only with the
// email, so an hourly owner may get one email sooner than an hour after
// the one sent while the clock was ahead; it carries only matches that
// one did not, as every email does. A stamp the clock reaches at the
// chosen hour itself (a clock exactly a day ahead) counts, from then, as
// that day's email.
func (s AlertSchedule) Due(now, last time.Time) bool {
	if clockAhead(last, now) {
		last = time.Time{}
	}
	switch s.Frequency {
	case AlertOff:
		return false
	case AlertHourly:
		return last.IsZero() || !now.Before(last.Add(time.Hour))
	case AlertDaily:
		loc, err := alertZone(s.Zone)
		if err != nil {
			// A zone that no longer loads: the digest at the hour in UTC
			// beats no digest at all.
			loc = time.UTC
		}
		at := s.lastDailyHour(now.In(loc))
		if last.IsZero() {
			return now.Sub(at) < time.Hour
		}
		return last.Before(at)
	default:
		return true
	}
}

// clockSkew is how far ahead of now a schedule's last time may lie and
// still be read as it is: the difference clocks that agree may still
// have, five minutes as Kerberos allows by default. A replica running
// that little ahead stamps one period end after another in the others'
// future; restarting a period for each would carry again, every period,
// the matches it scored just before its digest and stamped past the
// restart. A last that close holds the next digest back by at most this.
const clockSkew = 5 * time.Minute

// clockAhead reports whether last lies further ahead of now than
// clockSkew: stamped by a clock that was ahead (a host clock set back
// since, a replica running ahead), it cannot tell when the last email or
// digest went out, only that one did.
func clockAhead(last, now time.Time) bool {
	return last.Sub(now) > clockSkew
}

// DailyHourBefore is, for a daily schedule, the latest start of the
// chosen hour at or before now, in the schedule's zone; zero for the
// others.
func (s AlertSchedule) DailyHourBefore(now time.Time) time.Time {
	if s.Frequency != AlertDaily {
		return time.Time{}
	}
	loc, err := alertZone(s.Zone)
	if err != nil {
		loc = time.UTC // as Due does
	}
	return s.lastDailyHour(now.In(loc))
}

// lastDailyHour is the latest start of the chosen hour at or before now,
// in now's zone.
func (s AlertSchedule) lastDailyHour(now time.Time) time.Time {
	y, m, d := now.Date()
	at := s.hourOn(y, m, d, now.Location())
	if at.After(now) {
		at = s.hourOn(y, m, d-1, now.Location())
	}
	return at
}

// hourOn is when the chosen hour starts on that day in loc. On a day
// whose clocks skip it, it is the instant of the change, when the clocks
// pass it: time.Date reads a skipped time by one of the two offsets,
// which west of UTC is the hour before the chosen one.
func (s AlertSchedule) hourOn(y int, m time.Month, d int, loc *time.Location) time.Time {
	at := time.Date(y, m, d, s.Hour, 0, 0, 0, loc)
	ay, am, ad := at.Date()
	wall := time.Date(ay, am, ad, at.Hour(), at.Minute(), at.Second(), 0, time.UTC)
	if wall.Before(time.Date(y, m, d, s.Hour, 0, 0, 0, time.UTC)) {
		_, end := at.ZoneBounds()
		if !end.IsZero() {
			at = end
		}
	}
	return at
}

// Digest reports whether the schedule's emails gather a period's
// matches rather than go out as they come.
func (s AlertSchedule) Digest() bool {
	return s.Frequency == AlertHourly || s.Frequency == AlertDaily
}

// String describes the schedule for a page: "daily at 09:00 Europe/Berlin".
func (s AlertSchedule) String() string {
	switch s.Frequency {
	case AlertDaily:
		z := s.Zone
		if z == "" {
			z = "UTC"
		}
		return fmt.Sprintf("daily at %02d:00 %s", s.Hour, z)
	case "":
		return string(AlertAtOnce)
	}
	return string(s.Frequency)
}
