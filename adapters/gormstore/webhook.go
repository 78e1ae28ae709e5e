package gormstore

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

type webhookRow struct {
	ID                                           string `gorm:"primaryKey"`
	OwnerID, URL, DisabledReason                 string
	Platforms                                    string // comma-separated; empty means every platform
	MinScore, ConsecutiveFailures, DigestHour    int
	Active                                       bool
	Secret, PreviousSecret                       []byte // sealed; PreviousSecret is nil when none is kept
	CreatedAt, PreviousSecretUntil, LastDigestAt int64  `gorm:"autoCreateTime:false"` // µs
	Kind                                         string // 'webhook', or a channel's service (channel.go)
	Frequency, DigestZone                        string // a channel's: '' or 'at once', 'hourly', 'daily'; the daily digest's zone
}

func (webhookRow) TableName() string { return "webhooks" }

func (r webhookRow) webhook() core.Webhook {
	return core.Webhook{
		ID: r.ID, OwnerID: r.OwnerID, URL: r.URL, MinScore: r.MinScore, Platforms: splitList[core.Platform](r.Platforms),
		Active: r.Active, DisabledReason: r.DisabledReason, ConsecutiveFailures: r.ConsecutiveFailures,
		CreatedAt: fromMicros(r.CreatedAt), PreviousSecretUntil: fromMicros(r.PreviousSecretUntil),
		Kind: core.ChannelKind(r.Kind).Normal(), LastDigestAt: fromMicros(r.LastDigestAt),
		Schedule: core.AlertSchedule{Frequency: core.AlertFrequency(r.Frequency), Hour: r.DigestHour, Zone: r.DigestZone},
	}
}

// webhookColumns are the columns of w that change after creation.
func webhookColumns(w core.Webhook) map[string]any {
	return map[string]any{"min_score": w.MinScore, "platforms": joinList(w.Platforms), "active": w.Active,
		"disabled_reason": w.DisabledReason, "consecutive_failures": w.ConsecutiveFailures}
}

type deliveryRow struct {
	ID                                                                 string `gorm:"primaryKey"`
	WebhookID, OwnerID, MatchID, Event, LastError, TriggerKind, Status string
	Tries, ResponseStatus                                              int
	Payload                                                            []byte
	CreatedAt, LastAttemptAt, NextAttemptAt, LeaseUntil                int64 `gorm:"autoCreateTime:false"` // µs
}

func (deliveryRow) TableName() string { return "webhook_deliveries" }

// deliveryColumns are the columns of deliveryRow in the order of fields,
// scanned by hand: a channel's burst claims a thousand rows at once.
const deliveryColumns = "id, webhook_id, owner_id, match_id, event, last_error, trigger_kind, status, tries, response_status, payload, " +
	"created_at, last_attempt_at, next_attempt_at, lease_until"

func (r *deliveryRow) fields() []any {
	return []any{&r.ID, &r.WebhookID, &r.OwnerID, &r.MatchID, &r.Event, &r.LastError, &r.TriggerKind, &r.Status, &r.Tries, &r.ResponseStatus,
		&r.Payload, &r.CreatedAt, &r.LastAttemptAt, &r.NextAttemptAt, &r.LeaseUntil}
}

func (r deliveryRow) delivery() core.Delivery {
	return core.Delivery{
		ID: r.ID, WebhookID: r.WebhookID, OwnerID: r.OwnerID, MatchID: r.MatchID, Event: r.Event,
		Trigger: core.DeliveryTrigger(r.TriggerKind), Status: core.DeliveryStatus(r.Status), Tries: r.Tries,
		ResponseStatus: r.ResponseStatus, Error: r.LastError, Payload: r.Payload, CreatedAt: fromMicros(r.CreatedAt),
		LastAttemptAt: fromMicros(r.LastAttemptAt), NextAttemptAt: fromMicros(r.NextAttemptAt),
	}
}

func newDeliveryRow(d core.Delivery) deliveryRow {
	return deliveryRow{
		ID: d.ID, WebhookID: d.WebhookID, OwnerID: d.OwnerID, MatchID: d.MatchID, Event: d.Event,
		TriggerKind: string(d.Trigger), Status: string(d.Status), Tries: d.Tries, ResponseStatus: d.ResponseStatus,
		LastError: d.Error, Payload: d.Payload, CreatedAt: micros(d.CreatedAt),
		LastAttemptAt: micros(d.LastAttemptAt), NextAttemptAt: micros(d.NextAttemptAt),
	}
}

// WebhookStore implements ports.WebhookStore and ports.DeliveryQueue.
type WebhookStore struct{ db *DB }

func NewWebhookStore(db *DB) *WebhookStore { return &WebhookStore{db: db} }

// CreateWebhook implements ports.WebhookStore. A second webhook of one
// URL breaks webhooks_owner_url.
func (s *WebhookStore) CreateWebhook(ctx context.Context, w *core.Webhook, allow func(core.Usage) error, seal func(id string) ([]byte, error)) error {
	err := create(s.db.write(ctx), w, webhookRow{Kind: string(core.ChannelWebhook)}, allow, seal)
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return core.Errorf(core.KindConflict, "a webhook with this url exists already")
	}
	return translate(err, "webhook")
}

// create stores w on row, which holds its kind (spelled out for a webhook:
// webhooks_owner_url is on kind 'webhook') and channel columns. The owner's
// lock orders creates of webhooks and channels, so allow sees all before.
func create(db *gorm.DB, w *core.Webhook, row webhookRow, allow func(core.Usage) error, seal func(id string) ([]byte, error)) error {
	return db.Transaction(func(tx *gorm.DB) error {
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
		row.ID, row.OwnerID, row.URL, row.MinScore, row.Platforms = newID(), w.OwnerID, w.URL, w.MinScore, joinList(w.Platforms)
		row.Active, row.DisabledReason, row.CreatedAt = w.Active, w.DisabledReason, micros(tx.NowFunc())
		if row.Secret, err = seal(row.ID); err != nil {
			return err
		}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		*w = row.webhook()
		return nil
	})
}

func (s *WebhookStore) Webhook(ctx context.Context, ownerID, id string) (core.Webhook, []byte, error) {
	w, sealed, err := s.WebhookSecrets(ctx, ownerID, id)
	return w, sealed.Current, err
}

func (s *WebhookStore) Webhooks(ctx context.Context, ownerID string) ([]core.Webhook, error) {
	return webhooks(s.db.with(ctx), ownerID)
}

func webhooks(db *gorm.DB, ownerID string) ([]core.Webhook, error) {
	return list(db.Where("owner_id = ?", ownerID).Order("created_at, id"), "webhook", webhookRow.webhook)
}

func (s *WebhookStore) UpdateWebhook(ctx context.Context, ownerID, id string, change func(core.Webhook) (core.Webhook, error)) (core.Webhook, error) {
	row, err := locked(s.db.write(ctx), func(tx *gorm.DB, row *webhookRow) error {
		w, err := change(row.webhook())
		if err != nil {
			return err
		}
		return tx.Model(row).Updates(webhookColumns(w)).Error
	}, "id = ? AND owner_id = ?", id, ownerID)
	return row.webhook(), translate(err, "webhook")
}

// DeleteWebhook implements ports.WebhookStore; the deliveries cascade.
func (s *WebhookStore) DeleteWebhook(ctx context.Context, ownerID, id string) error {
	return translate(affected(s.db.write(ctx).Where("id = ? AND owner_id = ?", id, ownerID).Delete(&webhookRow{})), "webhook")
}

func (s *WebhookStore) WebhookSecrets(ctx context.Context, ownerID, id string) (core.Webhook, ports.SealedSecrets, error) {
	var row webhookRow
	err := s.db.with(ctx).Take(&row, "id = ? AND owner_id = ?", id, ownerID).Error
	return row.webhook(), ports.SealedSecrets{Current: row.Secret, Previous: row.PreviousSecret}, translate(err, "webhook")
}

// RotateSecret implements ports.WebhookStore. The replaced secret moves
// as sealed: its associated data is the webhook's id, which stays.
func (s *WebhookStore) RotateSecret(ctx context.Context, ownerID, id string, until time.Time, seal func(id string) ([]byte, error)) (core.Webhook, error) {
	row, err := locked(s.db.write(ctx), func(tx *gorm.DB, row *webhookRow) error {
		sealed, err := seal(row.ID)
		if err != nil {
			return err
		}
		var previous []byte
		if !until.IsZero() {
			previous = row.Secret
		}
		return tx.Model(row).Updates(map[string]any{"secret": sealed, "previous_secret": previous, "previous_secret_until": micros(until)}).Error
	}, "id = ? AND owner_id = ?", id, ownerID)
	return row.webhook(), translate(err, "webhook")
}

func (s *WebhookStore) ForgetPreviousSecrets(ctx context.Context, before time.Time) (int, error) {
	res := s.db.write(ctx).Model(&webhookRow{}).Where("previous_secret_until > 0 AND previous_secret_until <= ?", micros(before)).
		Updates(map[string]any{"previous_secret": nil, "previous_secret_until": 0})
	return int(res.RowsAffected), translate(res.Error, "webhook")
}

func (s *WebhookStore) NewDeliveryID() string { return newID() }

func (s *WebhookStore) AddDelivery(ctx context.Context, d core.Delivery, keep int) error {
	err := s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Select("id").Take(&webhookRow{}, "id = ? AND owner_id = ?", d.WebhookID, d.OwnerID).Error; err != nil {
			return err
		}
		return addDelivery(tx, d, keep)
	})
	return translate(err, "webhook")
}

// addDelivery stores d and trims its webhook's log.
func addDelivery(tx *gorm.DB, d core.Delivery, keep int) error {
	row := newDeliveryRow(d)
	if err := tx.Create(&row).Error; err != nil {
		return err
	}
	return trimLog(tx, d.WebhookID, keep)
}

// trimLog deletes the webhook's finished deliveries older than its newest
// keep (0: none). Queued ones stay however old; naming the final statuses
// lets the index find the finished rows without walking a backlog.
func trimLog(tx *gorm.DB, webhookID string, keep int) error {
	if keep <= 0 {
		return nil
	}
	newest := tx.Model(&deliveryRow{}).Select("id").Where("webhook_id = ?", webhookID).Order("created_at DESC, id DESC").Limit(keep)
	return tx.Where("webhook_id = ? AND status IN ? AND id NOT IN (?)", webhookID,
		[]core.DeliveryStatus{core.DeliveryDelivered, core.DeliveryFailed}, newest).Delete(&deliveryRow{}).Error
}

func (s *WebhookStore) Deliveries(ctx context.Context, ownerID, webhookID string, limit int) ([]core.Delivery, error) {
	if err := s.db.with(ctx).Select("id").Take(&webhookRow{}, "id = ? AND owner_id = ?", webhookID, ownerID).Error; err != nil {
		return nil, translate(err, "webhook")
	}
	return list(s.db.with(ctx).Where("webhook_id = ? AND owner_id = ?", webhookID, ownerID).
		Order("created_at DESC, id DESC").Limit(limit), "delivery", deliveryRow.delivery)
}

func (s *WebhookStore) UpdateDelivery(ctx context.Context, ownerID, webhookID, id string, change func(core.Delivery) (core.Delivery, error)) (core.Delivery, error) {
	row, err := locked(s.db.write(ctx), func(tx *gorm.DB, row *deliveryRow) error {
		d, err := change(row.delivery())
		if err != nil {
			return err
		}
		return tx.Model(row).Updates(map[string]any{
			"trigger_kind": string(d.Trigger), "status": string(d.Status), "tries": d.Tries, "response_status": d.ResponseStatus,
			"last_error": d.Error, "last_attempt_at": micros(d.LastAttemptAt), "next_attempt_at": micros(d.NextAttemptAt), "lease_until": 0,
		}).Error
	}, "id = ? AND webhook_id = ? AND owner_id = ?", id, webhookID, ownerID)
	return row.delivery(), translate(err, "delivery")
}

// replayCandidates reads the deliveries ReplayDeliveries' port doc names.
const replayCandidates = `SELECT d.* FROM webhook_deliveries d
	WHERE d.webhook_id = @webhook AND d.status = 'failed' AND d.event = @event AND d.match_id <> ''
		AND d.created_at >= @from AND d.created_at < @to
		AND NOT EXISTS (SELECT 1 FROM webhook_deliveries n WHERE n.webhook_id = d.webhook_id AND n.match_id = d.match_id
			AND (n.created_at > d.created_at OR (n.created_at = d.created_at AND n.id > d.id)))
		AND EXISTS (SELECT 1 FROM matches m WHERE m.id = d.match_id)
	ORDER BY d.created_at, d.id LIMIT @limit`

func (s *WebhookStore) ReplayDeliveries(ctx context.Context, ownerID, webhookID string, q ports.ReplayQuery, plan ports.ReplayPlan) (ports.ReplayResult, error) {
	var out ports.ReplayResult
	_, err := locked(s.db.write(ctx), func(tx *gorm.DB, hook *webhookRow) error {
		var rows []deliveryRow
		if q.Limit > 0 {
			args := map[string]any{"webhook": webhookID, "event": core.EventMatchCreated, "from": micros(q.From), "to": micros(q.To), "limit": q.Limit + 1}
			if err := tx.Raw(replayCandidates, args).Scan(&rows).Error; err != nil {
				return err
			}
		}
		rows, out.More = page(rows, q.Limit)
		// Stored to the microsecond: the caller gets the times it reads back.
		queued, err := plan(hook.webhook(), convert(rows, deliveryRow.delivery), tx.NowFunc().Truncate(time.Microsecond))
		if err != nil || len(queued) == 0 {
			return err
		}
		for i := range queued {
			queued[i].ID = newID()
		}
		out.Queued, rows = queued, convert(queued, newDeliveryRow)
		return tx.CreateInBatches(&rows, 500).Error
	}, "id = ? AND owner_id = ?", webhookID, ownerID)
	if err != nil {
		return ports.ReplayResult{}, translate(err, "webhook")
	}
	return out, nil
}

// ClaimDeliveries implements ports.DeliveryQueue. Inactive webhooks are
// left out by a hashed list rather than a join, so Postgres walks
// webhook_deliveries_due in order and stops at the limit.
func (s *WebhookStore) ClaimDeliveries(ctx context.Context, c ports.DeliveryClaim) ([]ports.DueDelivery, error) {
	args := map[string]any{"per": cmp.Or(max(c.PerWebhook, 0), c.Limit),
		"skip": append([]string{""}, c.Skip...)} // "" is no webhook's id, and NOT IN () is not SQL
	return s.lease(ctx, c.Limit, c.Lease, args, `WITH cand AS (
		SELECT d.`+s.db.pick("ctid", "rowid")+` AS tid, d.id, d.webhook_id, d.next_attempt_at FROM webhook_deliveries d
		WHERE d.status = 'queued' AND d.next_attempt_at <= @now AND d.lease_until < @now
			AND d.webhook_id NOT IN (SELECT w.id FROM webhooks w WHERE NOT w.active) AND d.webhook_id NOT IN @skip
		ORDER BY d.next_attempt_at, d.id LIMIT @limit`+s.db.pick(" FOR UPDATE OF d SKIP LOCKED", "")+`),
	ranked AS (SELECT tid, ROW_NUMBER() OVER (PARTITION BY webhook_id ORDER BY next_attempt_at, id) AS n FROM cand)`,
		"SELECT tid FROM ranked WHERE n <= @per")
}

// ClaimBurst implements ports.DeliveryQueue. The channel's queued rows
// are an index range (webhook_deliveries_status); those due are at most
// a second's worth, since a channel's deliveries fall due on its slots.
func (s *WebhookStore) ClaimBurst(ctx context.Context, webhookID string, limit int, lease time.Duration) ([]ports.DueDelivery, error) {
	args := map[string]any{"hook": webhookID, "event": core.EventMatchCreated}
	return s.lease(ctx, limit, lease, args, `WITH cand AS (
		SELECT d.`+s.db.pick("ctid", "rowid")+` AS tid FROM webhook_deliveries d
		WHERE d.webhook_id = @hook AND d.status = 'queued' AND d.event = @event AND d.next_attempt_at <= @now AND d.lease_until < @now
			AND (d.payload IS NULL OR length(d.payload) = 0)
			AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = d.webhook_id AND w.active)
		ORDER BY d.next_attempt_at, d.id LIMIT @limit`+s.db.pick(" FOR UPDATE OF d SKIP LOCKED", "")+`)`,
		"SELECT tid FROM cand")
}

// lease leases the rows (at most limit) keep selects by tid (ctid, rowid)
// from with's CTEs, and reads what sending them takes. Candidates are
// picked once, in a CTE, SKIP LOCKED on Postgres so replicas claim
// disjoint rows without waiting: an IN (subquery) with a LIMIT may run
// more than once, each run skipping what the last locked, and joined back
// by id the planner read the whole table. The outer conditions leave
// alone a row another claim leased meanwhile.
func (s *WebhookStore) lease(ctx context.Context, limit int, lease time.Duration, args map[string]any, with, keep string) ([]ports.DueDelivery, error) {
	if limit <= 0 {
		return nil, nil
	}
	now := s.db.gorm.NowFunc()
	args["limit"], args["now"], args["until"] = limit, micros(now), micros(now.Add(lease))
	claimed, err := scanAll(s.db.write(ctx).Raw(with+`
	UPDATE webhook_deliveries SET lease_until = @until
	WHERE `+s.db.pick("ctid = ANY(ARRAY("+keep+"))", "rowid IN ("+keep+")")+`
		AND status = 'queued' AND lease_until < @now RETURNING `+deliveryColumns, args), (*deliveryRow).fields)
	if err != nil || len(claimed) == 0 {
		return nil, translate(err, "delivery")
	}
	return s.dueOf(ctx, claimed)
}

// dueOf reads what sending the claimed rows takes, their webhooks and the
// matches of those without a payload, earliest due first (RETURNING gives
// the rows in no set order).
func (s *WebhookStore) dueOf(ctx context.Context, claimed []deliveryRow) ([]ports.DueDelivery, error) {
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
	var matches []matchRow
	err := s.db.with(ctx).Where("id IN ?", hookIDs).Find(&hooks).Error
	if err == nil && len(matchIDs) > 0 {
		matches, err = scanAll(s.db.with(ctx).Model(&matchRow{}).Select(matchColumns).Where("id IN ?", matchIDs), (*matchRow).fields)
	}
	if err != nil {
		return nil, translate(err, "delivery")
	}
	slices.SortFunc(claimed, func(a, b deliveryRow) int {
		return cmp.Or(cmp.Compare(a.NextAttemptAt, b.NextAttemptAt), strings.Compare(a.ID, b.ID))
	})
	// By id: a channel's burst claims a thousand rows of one webhook.
	byHook := make(map[string]ports.DueDelivery, len(hooks))
	for _, h := range hooks {
		byHook[h.ID] = ports.DueDelivery{Webhook: h.webhook(), SealedSecret: h.Secret, PreviousSealedSecret: h.PreviousSecret}
	}
	byMatch := make(map[string]*matchRow, len(matches))
	for i := range matches {
		byMatch[matches[i].ID] = &matches[i]
	}
	out := make([]ports.DueDelivery, 0, len(claimed))
	for _, r := range claimed {
		due, ok := byHook[r.WebhookID]
		if !ok {
			continue // deleted since the claim: its deliveries went with it
		}
		due.Delivery, due.LeaseUntil = r.delivery(), fromMicros(r.LeaseUntil)
		if m, ok := byMatch[r.MatchID]; ok && len(r.Payload) == 0 && m.OwnerID == r.OwnerID {
			match := m.match()
			due.Match = &match
		}
		out = append(out, due)
	}
	return out, nil
}

func (s *WebhookStore) FinishAttempts(ctx context.Context, attempts []ports.Attempt, rules ports.AttemptRules) ([]ports.AttemptResult, error) {
	out := make([]ports.AttemptResult, len(attempts))
	err := s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		// The attempts' webhooks are locked before any of their deliveries,
		// in id order: a webhook's deletion takes its row and then,
		// cascading, its deliveries, so a record that held a delivery and
		// then waited for its webhook would deadlock with it, as two
		// replicas' records would in other orders. NO KEY, so not against
		// the deliveries the scorer queues meanwhile. A webhook deleted
		// before is not read: its deliveries went with it, unrecorded.
		var hookIDs []string
		for _, a := range attempts {
			if !slices.Contains(hookIDs, a.Delivery.WebhookID) {
				hookIDs = append(hookIDs, a.Delivery.WebhookID)
			}
		}
		var hooks []webhookRow
		if len(hookIDs) > 0 {
			if err := tx.Clauses(lockNoKeyUpdate).Where("id IN ?", hookIDs).Order("id").Find(&hooks).Error; err != nil {
				return err
			}
		}
		recorded := map[string]bool{} // by delivery id
		if err := dropBeyondLog(tx, attempts, rules.KeepLog, recorded); err != nil {
			return err
		}
		rest := slices.DeleteFunc(slices.Clone(attempts), func(a ports.Attempt) bool { return recorded[a.Delivery.ID] })
		if err := s.recordAttempts(tx, rest, recorded); err != nil {
			return err
		}
		var ids []string // the webhooks with a delivery finished
		for _, a := range attempts {
			if d := a.Delivery; recorded[d.ID] && d.Status.Final() && !slices.Contains(ids, d.WebhookID) {
				ids = append(ids, d.WebhookID)
			}
		}
		for i, a := range attempts {
			d := a.Delivery
			out[i] = ports.AttemptResult{Recorded: recorded[d.ID], Webhook: a.Due.Webhook}
			if !recorded[d.ID] || !d.Status.Final() || rules.Webhook == nil {
				continue // the lease was lost, or the delivery goes on
			}
			j := slices.IndexFunc(hooks, func(h webhookRow) bool { return h.ID == d.WebhookID })
			if j < 0 {
				return gorm.ErrRecordNotFound
			}
			row := &hooks[j]
			before := row.webhook()
			if after := webhookColumns(rules.Webhook(before, d)); !maps.Equal(after, webhookColumns(before)) {
				if err := tx.Model(row).Updates(after).Error; err != nil {
					return err
				}
			}
			out[i].Webhook, out[i].SwitchedOff = row.webhook(), before.Active && !row.Active
			if out[i].SwitchedOff && before.Schedule.Digest() && rules.EndPeriod != nil {
				// Trimmed below with the rest of the channel's log.
				if err := s.db.endPeriod(tx, row, rules.EndPeriod, 0); err != nil {
					return err
				}
				out[i].Webhook = row.webhook()
			}
		}
		for _, id := range ids {
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

// dropBeyondLog deletes the rows of final attempts that FinishAttempts'
// trim would delete anyway, past the newest keep (created_at, id) of their
// webhook's in the batch: updated first, each would add an entry to every
// index (the status is indexed, so no update is heap-only). A row goes on
// recordAttempts' conditions, so it counts as recorded, and only while not
// among the webhook's newest keep rows as they stand. keep <= 0 keeps all.
func dropBeyondLog(tx *gorm.DB, attempts []ports.Attempt, keep int, recorded map[string]bool) error {
	if keep <= 0 {
		return nil
	}
	final := map[string][]core.Delivery{} // by webhook, each delivery once
	seen := map[string]bool{}
	for _, a := range attempts {
		if d := a.Delivery; d.Status.Final() && !seen[d.ID] {
			seen[d.ID] = true
			final[d.WebhookID] = append(final[d.WebhookID], d)
		}
	}
	beyond := map[string]bool{}
	for _, ds := range final {
		if len(ds) <= keep {
			continue
		}
		slices.SortFunc(ds, func(a, b core.Delivery) int {
			return cmp.Or(cmp.Compare(micros(b.CreatedAt), micros(a.CreatedAt)), strings.Compare(b.ID, a.ID))
		})
		for _, d := range ds[keep:] {
			beyond[d.ID] = true
		}
	}
	// One statement per webhook and claim (one lease time); a burst comes
	// of one claim or a few.
	type claim struct {
		hook  string
		lease int64
	}
	var claims []claim
	ids := map[claim][]string{}
	for _, a := range attempts {
		if d := a.Delivery; beyond[d.ID] {
			c := claim{d.WebhookID, micros(a.Due.LeaseUntil)}
			if ids[c] == nil {
				claims = append(claims, c)
			}
			ids[c] = append(ids[c], d.ID)
		}
	}
	for _, c := range claims {
		gone, err := column[string](tx.Raw(`DELETE FROM webhook_deliveries
			WHERE id IN ? AND lease_until = ? AND status = 'queued' AND webhook_id = ?
				AND id NOT IN (SELECT id FROM webhook_deliveries WHERE webhook_id = ? ORDER BY created_at DESC, id DESC LIMIT ?)
			RETURNING id`, ids[c], c.lease, c.hook, c.hook, keep))
		if err != nil {
			return err
		}
		for _, id := range gone {
			recorded[id] = true
		}
	}
	return nil
}

// recordAttempts stores the attempts in one statement, each only where its
// row still carries its claim's lease, and marks those stored in recorded.
func (s *WebhookStore) recordAttempts(tx *gorm.DB, attempts []ports.Attempt, recorded map[string]bool) error {
	if len(attempts) == 0 {
		return nil
	}
	// VALUES columns are column1, ... on both; Postgres needs their types,
	// which SQLite's CAST would take as conversions.
	row := s.db.pick("(?::text, ?::bigint, ?::text, ?::text, ?::integer, ?::integer, ?::text, ?::bigint, ?::bigint, ?::bytea)",
		"(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
	args := make([]any, 0, 10*len(attempts))
	for _, a := range attempts {
		d := a.Delivery
		if d.Payload == nil {
			d.Payload = []byte{}
		}
		args = append(args, d.ID, micros(a.Due.LeaseUntil), string(d.Trigger), string(d.Status), d.Tries,
			d.ResponseStatus, d.Error, micros(d.LastAttemptAt), micros(d.NextAttemptAt), d.Payload)
	}
	ids, err := column[string](tx.Raw(`UPDATE webhook_deliveries SET trigger_kind = v.column3, status = v.column4, tries = v.column5,
		response_status = v.column6, last_error = v.column7, last_attempt_at = v.column8, next_attempt_at = v.column9,
		lease_until = 0, payload = v.column10
		FROM (VALUES `+strings.Repeat(row+", ", len(attempts)-1)+row+`) AS v
		WHERE webhook_deliveries.id = v.column1 AND webhook_deliveries.lease_until = v.column2
			AND webhook_deliveries.status = 'queued'
		RETURNING webhook_deliveries.id`, args...))
	for _, id := range ids {
		recorded[id] = true
	}
	return err
}

func (s *WebhookStore) ReleaseDeliveries(ctx context.Context, due []ports.DueDelivery) error {
	if len(due) == 0 {
		return nil
	}
	return translate(s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		for _, d := range due {
			if err := tx.Model(&deliveryRow{}).Where("id = ? AND lease_until = ?", d.Delivery.ID, micros(d.LeaseUntil)).
				Update("lease_until", 0).Error; err != nil {
				return err
			}
		}
		return nil
	}), "delivery")
}

func (s *WebhookStore) DropDelivery(ctx context.Context, due ports.DueDelivery) error {
	return translate(s.db.write(ctx).Where("id = ? AND lease_until = ?", due.Delivery.ID, micros(due.LeaseUntil)).
		Delete(&deliveryRow{}).Error, "delivery")
}
