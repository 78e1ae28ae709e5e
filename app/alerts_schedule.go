package app

import (
	"context"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// AlertSchedules reads and sets each owner's choice of when alert emails
// go out (the dashboard's Account page).
type AlertSchedules struct{ store ports.AlertStore }

// NewAlertSchedules returns the owners' alert schedules kept in store.
func NewAlertSchedules(store ports.AlertStore) *AlertSchedules {
	return &AlertSchedules{store: store}
}

// Schedule returns the owner's alert schedule.
func (s *AlertSchedules) Schedule(ctx context.Context, ownerID string) (core.AlertSchedule, error) {
	sched, _, err := s.store.AlertSchedule(ctx, ownerID)
	return sched, err
}

// Set validates and stores the owner's alert schedule (see
// core.NewAlertSchedule).
func (s *AlertSchedules) Set(ctx context.Context, ownerID, frequency string, hour int, zone string) (core.AlertSchedule, error) {
	sched, err := core.NewAlertSchedule(frequency, hour, zone)
	if err != nil {
		return core.AlertSchedule{}, err
	}
	return sched, s.store.SetAlertSchedule(ctx, ownerID, sched)
}
