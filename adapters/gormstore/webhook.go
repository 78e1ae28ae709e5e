package gormstore

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

type webhookRow struct {
	ID                  string `gorm:"primaryKey"`
	OwnerID             string
	URL                 string `gorm:"column:url"`
	MinScore            int
	Platforms           string // comma-separated; empty means every platform
	Active              bool
	DisabledReason      string
	ConsecutiveFailures int
	Secret              []byte
	CreatedAt           int64 `gorm:"autoCreateTime:false"`
}

func (webhookRow) TableName() string { return "webhooks" }

func (r webhookRow) webhook() core.Webhook {
	w := core.Webhook{
		ID: r.ID, OwnerID: r.OwnerID, URL: r.URL, MinScore: r.MinScore, Active: r.Active,
		DisabledReason: r.DisabledReason, ConsecutiveFailures: r.ConsecutiveFailures,
		CreatedAt: fromMicros(r.CreatedAt),
	}
	if r.Platforms != "" {
		for _, p := range strings.Split(r.Platforms, ",") {
			w.Platforms = append(w.Platforms, core.Platform(p))
		}
	}
	return w
}

func joinPlatforms(ps []core.Platform) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = string(p)
	}
	return strings.Join(s, ",")
}

type deliveryRow struct {
	ID             string `gorm:"primaryKey"`
	WebhookID      string
	OwnerID        string
	MatchID        string
	Event          string
	TriggerKind    string
	Status         string
	Tries          int
	ResponseStatus int
	LastError      string
	Payload        []byte
	CreatedAt      int64 `gorm:"autoCreateTime:false"`
	LastAttemptAt  int64
	NextAttemptAt  int64
	LeaseUntil     int64
}

func (deliveryRow) TableName() string { return "webhook_deliveries" }

func (r deliveryRow) delivery() core.Delivery {
	return core.Delivery{
		ID: r.ID, WebhookID: r.WebhookID, OwnerID: r.OwnerID, Event: r.Event,
		Trigger: core.DeliveryTrigger(r.TriggerKind), Status: core.DeliveryStatus(r.Status),
		Tries: r.Tries, ResponseStatus: r.ResponseStatus, Error: r.LastError, Payload: r.Payload,
		CreatedAt: fromMicros(r.CreatedAt), LastAttemptAt: fromMicros(r.LastAttemptAt),
		NextAttemptAt: fromMicros(r.NextAttemptAt),
	}
}

func newDeliveryRow(d core.Delivery) deliveryRow {
	return deliveryRow{
		ID: d.ID, WebhookID: d.WebhookID, OwnerID: d.OwnerID, Event: d.Event,
		TriggerKind: string(d.Trigger), Status: string(d.Status), Tries: d.Tries,
		ResponseStatus: d.ResponseStatus, LastError: d.Error, Payload: d.Payload,
		CreatedAt: micros(d.CreatedAt), LastAttemptAt: micros(d.LastAttemptAt), NextAttemptAt: micros(d.NextAttemptAt),
	}
}

// attemptColumns are the columns an attempt or a requeue changes.
func attemptColumns(d core.Delivery) map[string]any {
	return map[string]any{
		"trigger_kind": string(d.Trigger), "status": string(d.Status), "tries": d.Tries,
		"response_status": d.ResponseStatus, "last_error": d.Error,
		"last_attempt_at": micros(d.LastAttemptAt), "next_attempt_at": micros(d.NextAttemptAt),
		"lease_until": 0,
	}
}

// WebhookStore keeps webhooks and their deliveries.
type WebhookStore struct {
	db *DB
}

var _ ports.WebhookStore = (*WebhookStore)(nil)

// NewWebhookStore returns the webhook store of db.
func NewWebhookStore(db *DB) *WebhookStore { return &WebhookStore{db: db} }

// CreateWebhook implements ports.WebhookStore.
func (s *WebhookStore) CreateWebhook(ctx context.Context, w *core.Webhook, allow func(core.Usage) error, seal func(id string) ([]byte, error)) error {
	err := s.db.with(ctx).Transaction(func(tx *gorm.DB) error {
		// The owner lock orders concurrent creates of one owner, so the
		// duplicate check and allow see the create before.
		if _, err := lockOwner(tx, w.OwnerID); err != nil {
			return translate(err, "owner")
		}
		u, err := usage(tx, w.OwnerID)
		if err != nil {
			return err
		}
		if err := allow(u); err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&webhookRow{}).Where("owner_id = ? AND url = ?", w.OwnerID, w.URL).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return core.Errorf(core.KindConflict, "a webhook with this url exists already")
		}
		id := newID()
		sealed, err := seal(id)
		if err != nil {
			return err
		}
		row := webhookRow{
			ID: id, OwnerID: w.OwnerID, URL: w.URL, MinScore: w.MinScore, Platforms: joinPlatforms(w.Platforms),
			Active: w.Active, DisabledReason: w.DisabledReason, Secret: sealed, CreatedAt: tx.NowFunc().UnixMicro(),
		}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		*w = row.webhook()
		return nil
	})
	return translate(err, "webhook")
}

// Webhook implements ports.WebhookStore.
func (s *WebhookStore) Webhook(ctx context.Context, ownerID, id string) (core.Webhook, []byte, error) {
	var row webhookRow
	if err := s.db.with(ctx).Take(&row, "id = ? AND owner_id = ?", id, ownerID).Error; err != nil {
		return core.Webhook{}, nil, translate(err, "webhook")
	}
	return row.webhook(), row.Secret, nil
}

// Webhooks implements ports.WebhookStore.
func (s *WebhookStore) Webhooks(ctx context.Context, ownerID string) ([]core.Webhook, error) {
	var rows []webhookRow
	if err := s.db.with(ctx).Where("owner_id = ?", ownerID).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, translate(err, "webhook")
	}
	out := make([]core.Webhook, len(rows))
	for i, r := range rows {
		out[i] = r.webhook()
	}
	return out, nil
}

// UpdateWebhook implements ports.WebhookStore.
func (s *WebhookStore) UpdateWebhook(ctx context.Context, ownerID, id string, change func(core.Webhook) (core.Webhook, error)) (core.Webhook, error) {
	var out core.Webhook
	err := s.db.with(ctx).Transaction(func(tx *gorm.DB) error {
		var row webhookRow
		if err := tx.Clauses(lockForUpdate).Take(&row, "id = ? AND owner_id = ?", id, ownerID).Error; err != nil {
			return err
		}
		w, err := change(row.webhook())
		if err != nil {
			return err
		}
		if err := saveWebhook(tx, row.ID, w); err != nil {
			return err
		}
		out = w
		out.ID, out.OwnerID, out.URL, out.CreatedAt = row.ID, row.OwnerID, row.URL, fromMicros(row.CreatedAt)
		return nil
	})
	return out, translate(err, "webhook")
}

// saveWebhook stores the fields of w that change after creation.
func saveWebhook(tx *gorm.DB, id string, w core.Webhook) error {
	return tx.Model(&webhookRow{}).Where("id = ?", id).Updates(map[string]any{
		"min_score": w.MinScore, "platforms": joinPlatforms(w.Platforms), "active": w.Active,
		"disabled_reason": w.DisabledReason, "consecutive_failures": w.ConsecutiveFailures,
	}).Error
}

// DeleteWebhook implements ports.WebhookStore.
func (s *WebhookStore) DeleteWebhook(ctx context.Context, ownerID, id string) error {
	// The deliveries go with it through the foreign key's cascade.
	res := s.db.with(ctx).Where("id = ? AND owner_id = ?", id, ownerID).Delete(&webhookRow{})
	if res.Error != nil {
		return translate(res.Error, "webhook")
	}
	if res.RowsAffected == 0 {
		return core.Errorf(core.KindNotFound, "webhook not found")
	}
	return nil
}

// NewDeliveryID implements ports.WebhookStore.
func (s *WebhookStore) NewDeliveryID() string { return newID() }

// AddDelivery implements ports.WebhookStore.
func (s *WebhookStore) AddDelivery(ctx context.Context, d core.Delivery, keep int) error {
	err := s.db.with(ctx).Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&webhookRow{}).Where("id = ? AND owner_id = ?", d.WebhookID, d.OwnerID).Count(&n).Error; err != nil {
			return err
		}
		if n == 0 {
			return gorm.ErrRecordNotFound
		}
		row := newDeliveryRow(d)
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		return trimLog(tx, d.WebhookID, keep)
	})
	return translate(err, "webhook")
}

// trimLog deletes the webhook's finished deliveries older than its
// newest keep; keep 0 deletes nothing. Queued ones are work still to do,
// so they stay however old. Naming the final statuses (rather than "not
// queued") lets the status index find the few finished rows without
// walking a backlog of queued ones.
func trimLog(tx *gorm.DB, webhookID string, keep int) error {
	if keep <= 0 {
		return nil
	}
	return tx.Exec(`DELETE FROM webhook_deliveries WHERE webhook_id = ? AND status IN (?, ?) AND id NOT IN (
		SELECT id FROM webhook_deliveries WHERE webhook_id = ? ORDER BY created_at DESC, id DESC LIMIT ?)`,
		webhookID, string(core.DeliveryDelivered), string(core.DeliveryFailed), webhookID, keep).Error
}

// finished reports whether a stored status ends a delivery: such rows
// are the ones a log trim may delete.
func finished(status core.DeliveryStatus) bool {
	return status == core.DeliveryDelivered || status == core.DeliveryFailed
}

// Deliveries implements ports.WebhookStore.
func (s *WebhookStore) Deliveries(ctx context.Context, ownerID, webhookID string, limit int) ([]core.Delivery, error) {
	db := s.db.with(ctx)
	var n int64
	if err := db.Model(&webhookRow{}).Where("id = ? AND owner_id = ?", webhookID, ownerID).Count(&n).Error; err != nil {
		return nil, translate(err, "webhook")
	}
	if n == 0 {
		return nil, core.Errorf(core.KindNotFound, "webhook not found")
	}
	var rows []deliveryRow
	if err := db.Where("webhook_id = ? AND owner_id = ?", webhookID, ownerID).
		Order("created_at DESC, id DESC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, translate(err, "delivery")
	}
	out := make([]core.Delivery, len(rows))
	for i, r := range rows {
		out[i] = r.delivery()
	}
	return out, nil
}

// UpdateDelivery implements ports.WebhookStore.
func (s *WebhookStore) UpdateDelivery(ctx context.Context, ownerID, webhookID, id string, change func(core.Delivery) (core.Delivery, error)) (core.Delivery, error) {
	var out core.Delivery
	err := s.db.with(ctx).Transaction(func(tx *gorm.DB) error {
		var row deliveryRow
		if err := tx.Clauses(lockForUpdate).Take(&row, "id = ? AND webhook_id = ? AND owner_id = ?", id, webhookID, ownerID).Error; err != nil {
			return err
		}
		d, err := change(row.delivery())
		if err != nil {
			return err
		}
		if err := tx.Model(&deliveryRow{}).Where("id = ?", id).Updates(attemptColumns(d)).Error; err != nil {
			return err
		}
		out = row.delivery()
		out.Trigger, out.Status, out.Tries = d.Trigger, d.Status, d.Tries
		out.ResponseStatus, out.Error = d.ResponseStatus, d.Error
		out.LastAttemptAt, out.NextAttemptAt = d.LastAttemptAt, d.NextAttemptAt
		return nil
	})
	return out, translate(err, "delivery")
}

// deliveryColumns lists the columns scanDelivery reads, in its order.
const deliveryColumns = `id, webhook_id, owner_id, match_id, event, trigger_kind, status, tries,
	response_status, last_error, payload, created_at, last_attempt_at, next_attempt_at, lease_until`

// ClaimDeliveries implements ports.WebhookStore.
//
// One statement claims: it picks due candidates (on Postgres locking them
// with SKIP LOCKED, so replicas claim disjoint rows at once without
// waiting on each other), keeps at most PerWebhook of each webhook, and
// sets their lease. The outer conditions repeat status and lease, so a
// row another claim leased meanwhile is left alone even where the
// candidates were read before that claim committed.
//
// On Postgres the candidates come from one table (inactive webhooks are
// left out by a hashed list of their ids, not a join), so the plan is
// the walk of webhook_deliveries_due in its own order that stops at the
// limit, as long as the statistics know how many rows are queued (the
// queue's vacuum analyzes it every few seconds: with a backlog unknown
// to them, either shape reads the whole queue and sorts it). The lease
// is set through the locked rows' ctids, a TID scan: joined back by
// id, the planner read the whole table or the due index to find them.
func (s *WebhookStore) ClaimDeliveries(ctx context.Context, c ports.DeliveryClaim) ([]ports.DueDelivery, error) {
	if c.Limit <= 0 {
		return nil, nil
	}
	per := c.PerWebhook
	if per <= 0 {
		per = c.Limit
	}
	now := s.db.gorm.NowFunc()
	until := micros(now.Add(c.Lease))
	cols, active := "d.id", "EXISTS (SELECT 1 FROM webhooks w WHERE w.id = d.webhook_id AND w.active = ?)"
	if s.db.postgres {
		cols, active = "d.ctid AS tid, d.id", "d.webhook_id NOT IN (SELECT w.id FROM webhooks w WHERE w.active <> ?)"
	}
	cand := `SELECT ` + cols + `, d.webhook_id, d.next_attempt_at FROM webhook_deliveries d
		WHERE d.status = ? AND d.next_attempt_at <= ? AND d.lease_until < ? AND ` + active
	args := []any{string(core.DeliveryQueued), micros(now), micros(now), true}
	if len(c.Skip) > 0 {
		cand += " AND d.webhook_id NOT IN ?"
		args = append(args, c.Skip)
	}
	cand += " ORDER BY d.next_attempt_at, d.id LIMIT ?"
	args = append(args, c.Limit)
	ranked := "id, ROW_NUMBER() OVER (PARTITION BY webhook_id ORDER BY next_attempt_at, id) AS n"
	picked := "id IN (SELECT id FROM ranked WHERE n <= ?)"
	if s.db.postgres {
		cand += " FOR UPDATE OF d SKIP LOCKED"
		ranked = "tid, " + ranked
		picked = "ctid = ANY(ARRAY(SELECT tid FROM ranked WHERE n <= ?))"
	}
	q := `WITH cand AS (` + cand + `),
		ranked AS (SELECT ` + ranked + ` FROM cand)
		UPDATE webhook_deliveries SET lease_until = ?
		WHERE ` + picked + ` AND status = ? AND lease_until < ?
		RETURNING ` + deliveryColumns
	args = append(args, until, per, string(core.DeliveryQueued), micros(now))

	var claimed []deliveryRow
	take := func(db *gorm.DB) error {
		rows, err := db.Raw(q, args...).Rows()
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r deliveryRow
			if err := rows.Scan(&r.ID, &r.WebhookID, &r.OwnerID, &r.MatchID, &r.Event, &r.TriggerKind, &r.Status, &r.Tries,
				&r.ResponseStatus, &r.LastError, &r.Payload, &r.CreatedAt, &r.LastAttemptAt, &r.NextAttemptAt, &r.LeaseUntil); err != nil {
				return err
			}
			claimed = append(claimed, r)
		}
		return rows.Err()
	}
	var err error
	if s.db.postgres {
		err = take(s.db.with(ctx))
	} else {
		// In a transaction, so that it queues with this process's other
		// writers (see sqlitelock.go) rather than meet SQLite's busy
		// handler.
		err = s.db.with(ctx).Transaction(take)
	}
	if err != nil {
		return nil, translate(err, "delivery")
	}
	if len(claimed) == 0 {
		return nil, nil
	}

	// What sending takes comes with the claim, two reads for the batch
	// rather than two for every delivery.
	var hookIDs, matchIDs []string
	for _, r := range claimed {
		if !slices.Contains(hookIDs, r.WebhookID) {
			hookIDs = append(hookIDs, r.WebhookID)
		}
		if len(r.Payload) == 0 && r.MatchID != "" {
			matchIDs = append(matchIDs, r.MatchID)
		}
	}
	var hooks []webhookRow
	if err := s.db.with(ctx).Where("id IN ?", hookIDs).Find(&hooks).Error; err != nil {
		return nil, translate(err, "webhook")
	}
	byID := make(map[string]webhookRow, len(hooks))
	for _, h := range hooks {
		byID[h.ID] = h
	}
	matches := map[string]core.Match{}
	if len(matchIDs) > 0 {
		var rows []matchRow
		if err := s.db.with(ctx).Where("id IN ?", matchIDs).Find(&rows).Error; err != nil {
			return nil, translate(err, "match")
		}
		for _, r := range rows {
			matches[r.ID] = r.match()
		}
	}
	// Claimed rows come back in no set order; earliest due goes first.
	slices.SortFunc(claimed, func(a, b deliveryRow) int {
		return cmp.Or(cmp.Compare(a.NextAttemptAt, b.NextAttemptAt), strings.Compare(a.ID, b.ID))
	})
	out := make([]ports.DueDelivery, 0, len(claimed))
	for _, r := range claimed {
		h, ok := byID[r.WebhookID]
		if !ok {
			continue // deleted since the claim: its deliveries went with it
		}
		due := ports.DueDelivery{
			Delivery: r.delivery(), MatchID: r.MatchID, Webhook: h.webhook(), SealedSecret: h.Secret,
			LeaseUntil: fromMicros(r.LeaseUntil),
		}
		if m, ok := matches[r.MatchID]; ok && len(r.Payload) == 0 && m.OwnerID == r.OwnerID {
			due.Match = &m
		}
		out = append(out, due)
	}
	return out, nil
}

// FinishAttempts implements ports.WebhookStore.
func (s *WebhookStore) FinishAttempts(ctx context.Context, attempts []ports.Attempt, rules ports.AttemptRules) ([]ports.AttemptResult, error) {
	out := make([]ports.AttemptResult, len(attempts))
	err := s.db.with(ctx).Transaction(func(tx *gorm.DB) error {
		recorded, err := s.recordAttempts(tx, attempts)
		if err != nil {
			return err
		}
		var trim []string
		hooks := map[string]core.Webhook{} // read once a batch, under the row lock
		for i, a := range attempts {
			d := a.Delivery
			out[i] = ports.AttemptResult{Webhook: a.Due.Webhook}
			if !recorded[d.ID] {
				continue // the lease was lost
			}
			out[i].Recorded = true
			if !finished(d.Status) {
				continue
			}
			if !slices.Contains(trim, d.WebhookID) {
				trim = append(trim, d.WebhookID)
			}
			if rules.Webhook == nil {
				continue
			}
			before, ok := hooks[d.WebhookID]
			if !ok {
				var row webhookRow
				if err := tx.Clauses(lockForUpdate).Take(&row, "id = ?", d.WebhookID).Error; err != nil {
					return err
				}
				before = row.webhook()
			}
			w := rules.Webhook(before, d)
			w.ID, w.OwnerID, w.URL, w.CreatedAt = before.ID, before.OwnerID, before.URL, before.CreatedAt
			out[i].SwitchedOff = before.Active && !w.Active
			if w.ConsecutiveFailures != before.ConsecutiveFailures || w.Active != before.Active || w.DisabledReason != before.DisabledReason ||
				w.MinScore != before.MinScore || !slices.Equal(w.Platforms, before.Platforms) {
				if err := saveWebhook(tx, w.ID, w); err != nil {
					return err
				}
			}
			hooks[w.ID] = w
			out[i].Webhook = w
		}
		for _, id := range trim {
			if err := trimLog(tx, id, rules.KeepLog); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, translate(err, "webhook")
	}
	return out, nil
}

// recordAttempts stores the attempts in one statement, each only where
// the row still carries its claim's lease, and returns the ids stored.
// One statement rather than one per attempt: on Postgres each is a round
// trip, and the recorder's batches are up to 64.
func (s *WebhookStore) recordAttempts(tx *gorm.DB, attempts []ports.Attempt) (map[string]bool, error) {
	// VALUES columns are column1, column2, ... on both databases; Postgres
	// needs their types, which SQLite's CAST would take as conversions.
	row := "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	if s.db.postgres {
		row = "(?::text, ?::bigint, ?::text, ?::text, ?::integer, ?::integer, ?::text, ?::bigint, ?::bigint, ?::bytea)"
	}
	var q strings.Builder
	q.WriteString(`UPDATE webhook_deliveries SET trigger_kind = v.column3, status = v.column4, tries = v.column5,
		response_status = v.column6, last_error = v.column7, last_attempt_at = v.column8, next_attempt_at = v.column9,
		lease_until = 0, payload = v.column10 FROM (VALUES `)
	args := make([]any, 0, 10*len(attempts)+1)
	for i, a := range attempts {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString(row)
		d := a.Delivery
		payload := d.Payload
		if payload == nil {
			payload = []byte{}
		}
		args = append(args, d.ID, micros(a.Due.LeaseUntil), string(d.Trigger), string(d.Status), d.Tries,
			d.ResponseStatus, d.Error, micros(d.LastAttemptAt), micros(d.NextAttemptAt), payload)
	}
	q.WriteString(`) AS v WHERE webhook_deliveries.id = v.column1 AND webhook_deliveries.lease_until = v.column2
		AND webhook_deliveries.status = ? RETURNING webhook_deliveries.id`)
	args = append(args, string(core.DeliveryQueued))
	rows, err := tx.Raw(q.String(), args...).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string]bool, len(attempts))
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

// ReleaseDeliveries implements ports.WebhookStore.
func (s *WebhookStore) ReleaseDeliveries(ctx context.Context, due []ports.DueDelivery) error {
	if len(due) == 0 {
		return nil
	}
	return translate(s.db.with(ctx).Transaction(func(tx *gorm.DB) error {
		for _, d := range due {
			if err := tx.Model(&deliveryRow{}).Where("id = ? AND lease_until = ?", d.Delivery.ID, micros(d.LeaseUntil)).
				Update("lease_until", 0).Error; err != nil {
				return err
			}
		}
		return nil
	}), "delivery")
}

// DropDelivery implements ports.WebhookStore.
func (s *WebhookStore) DropDelivery(ctx context.Context, due ports.DueDelivery) error {
	return translate(s.db.with(ctx).Where("id = ? AND lease_until = ?", due.Delivery.ID, micros(due.LeaseUntil)).
		Delete(&deliveryRow{}).Error, "delivery")
}
