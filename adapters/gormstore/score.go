package gormstore

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// ClaimUnscored implements ports.MatchStore. SKIP LOCKED lets replicas on
// Postgres claim disjoint rows; SQLite's one writer makes the plain form
// exclusive. An index scan of matches_unscored marks scored (dead) rows'
// entries and passes them after, where a bitmap scan visits them every
// claim until a vacuum (docs/adr/0006-delivery-queue-on-postgres.md).
// As in ClaimBurst, the candidates are picked once, in a CTE, and leased
// by ctid (rowid): Postgres may run an IN (subquery) with a LIMIT more
// than once, each run skipping what the last locked, leasing too many.
func (s *MatchStore) ClaimUnscored(ctx context.Context, limit int, lease time.Duration) ([]core.Match, error) {
	now := s.db.gorm.NowFunc()
	args := map[string]any{"now": micros(now), "until": micros(now.Add(lease)), "limit": limit}
	tid := s.db.pick("ctid", "rowid")
	var rows []matchRow
	err := s.db.write(ctx).Transaction(func(tx *gorm.DB) (err error) {
		if s.db.postgres {
			if err := tx.Exec("SET LOCAL enable_bitmapscan = off").Error; err != nil {
				return err
			}
		}
		rows, err = scanAll(tx.Raw(`WITH cand AS (
			SELECT `+tid+` AS tid FROM matches WHERE score IS NULL AND lease_until < @now ORDER BY created_us LIMIT @limit`+
			s.db.pick(" FOR UPDATE SKIP LOCKED", "")+`)
		UPDATE matches SET lease_until = @until
		WHERE `+s.db.pick("ctid = ANY(ARRAY(SELECT tid FROM cand))", "rowid IN (SELECT tid FROM cand)")+`
			AND score IS NULL AND lease_until < @now RETURNING `+matchColumns, args), (*matchRow).fields)
		return err
	})
	return convert(rows, matchRow.match), translate(err, "match")
}

// Unscored implements ports.ScoringBacklog. The inner LIMIT stops the
// count at limit rows, so a read costs the same however far behind.
func (s *MatchStore) Unscored(ctx context.Context, limit int) (int, error) {
	var n int
	err := s.db.with(ctx).Raw("SELECT COUNT(*) FROM (SELECT 1 FROM matches WHERE score IS NULL LIMIT ?) AS waiting", max(limit, 0)).Scan(&n).Error
	return n, translate(err, "match")
}

func (s *MatchStore) SetScores(ctx context.Context, updates []ports.ScoreUpdate, plan ports.DeliveryPlan) ([]core.Match, error) {
	if len(updates) == 0 {
		return nil, nil
	}
	var out []core.Match
	err := s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.db.scoring(tx); err != nil {
			return err
		}
		if err := s.db.holdPhrases(tx, updates); err != nil {
			return err
		}
		now := tx.NowFunc() // after scoring: a digest's read waits for this time's matches
		first, err := setScores(tx, updates, now.UnixMicro())
		if err != nil {
			return err
		}
		for i, u := range updates {
			if first[i] {
				m, sc := u.Match, u.Score
				m.Score = &sc
				out = append(out, m)
			}
		}
		if err := s.db.countScored(tx, out, now); err != nil {
			return err
		}
		if plan == nil || len(out) == 0 {
			return nil
		}
		hooks := map[string][]core.Webhook{}
		var queued []deliveryRow
		for _, m := range out {
			hs, ok := hooks[m.OwnerID]
			if !ok {
				// Held from the read, as the deliveries' references would
				// hold them: a webhook deleted meanwhile is not read, where
				// its deliveries would fail the batch on their foreign key.
				if hs, err = webhooks(tx.Clauses(lockKeyShare), m.OwnerID); err != nil {
					return err
				}
				hooks[m.OwnerID] = hs
			}
			for _, d := range plan(m, hs, now) {
				d.ID, d.MatchID = cmp.Or(d.ID, newID()), m.ID
				queued = append(queued, newDeliveryRow(d))
			}
		}
		return tx.CreateInBatches(&queued, 1000).Error // none for none
	})
	if err != nil {
		return nil, translate(err, "match")
	}
	return out, nil
}

// scoringKey is the Postgres advisory lock that orders a digest's read
// after the scoring under way; the migrations take 8442201.
const scoringKey = 8442202

// scoring starts a scoring transaction, and scoringBarrier a digest's
// read, so that every match is in a digest: a batch that took its time
// before a period's end but committed after the digest read would be in
// neither that digest nor the next, whose period starts at that end. The
// barrier waits for the batches under way; a batch after it takes a later
// time. On Postgres batches hold the lock shared, so they never wait for
// each other. On SQLite a batch holds the writer's one connection from
// before it takes its time, so a turn on it is the barrier (in memory the
// read shares that connection anyway).
func (db *DB) scoring(tx *gorm.DB) error {
	if !db.postgres {
		return nil
	}
	return tx.Exec("SELECT pg_advisory_xact_lock_shared(?)", scoringKey).Error
}

// scoringBarrier is the barrier before a digest's read of the matches
// scored before to. One asked for at or after to serves every read up to
// to: the batches that took an earlier time held the lock, or the
// writer, when it was asked for. So a sweep that ends many periods at one time waits
// once, and scoring is held up once a sweep, not once a channel.
func (db *DB) scoringBarrier(ctx context.Context, to time.Time) error {
	if to.UnixMicro() <= db.barrier.Load() {
		return nil
	}
	asked := time.Now().UnixMicro()
	// A statement of its own: its transaction, and the lock, end with it.
	err := db.holdScoring(db.write(ctx))
	for err == nil { // keep the latest: two sweeps may race
		last := db.barrier.Load()
		if asked <= last || db.barrier.CompareAndSwap(last, asked) {
			break
		}
	}
	return err
}

// holdScoring waits for the scoring under way and holds later scoring
// until q's transaction ends: on Postgres the scoring lock taken alone, on
// SQLite a turn on the writer, which a transaction on it holds already.
// One taken after row locks must leave the scoring able to read those
// rows (KEY SHARE), or the two would wait for each other.
func (db *DB) holdScoring(q *gorm.DB) error {
	return q.Exec(db.pick("SELECT pg_advisory_xact_lock(?)", "SELECT ?"), scoringKey).Error
}

// holdPhrases holds, on Postgres, the phrases of the updates' matches
// against their deletion (KEY SHARE, in id order) before the matches are
// scored. The daily counts refer to the phrases, so storing them takes
// the phrases; a deletion takes its phrase and then, cascading, its
// matches: taking a match and then its phrase would deadlock with it.
// Held first, a phrase is deleted after the batch, or the batch finds it
// and its matches gone and passes them over.
func (db *DB) holdPhrases(tx *gorm.DB, updates []ports.ScoreUpdate) error {
	if !db.postgres {
		return nil // one writer at a time
	}
	var ids []string
	for _, u := range updates {
		if storable(u.Match.ID) {
			ids = append(ids, u.Match.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	list, _ := json.Marshal(ids)
	return tx.Exec(`SELECT id FROM phrases WHERE id IN (SELECT phrase_id FROM matches WHERE id IN (SELECT value FROM `+
		db.jsonValues()+`)) ORDER BY id FOR KEY SHARE`, string(list)).Error
}

// setScores stores each update's score where its match had none and says
// which did, one statement a thousand (docs/adr/0005-scoring-in-batches.md).
// An id no row can hold is left out: Postgres would refuse the whole
// statement for it, where SQLite passes over the one match.
func setScores(tx *gorm.DB, updates []ports.ScoreUpdate, now int64) ([]bool, error) {
	first := make([]bool, len(updates))
	at := make(map[string]int, len(updates)) // 1 + the update's index, by "<owner id> <match id>"
	var args []any
	for i, u := range updates {
		if !storable(u.Match.ID) || !storable(u.Match.OwnerID) {
			continue
		}
		if k := u.Match.OwnerID + " " + u.Match.ID; at[k] == 0 {
			at[k] = i + 1
			args = append(args, u.Match.ID, u.Match.OwnerID, u.Score.Value, string(u.Score.Intent), u.Score.Reason)
		}
	}
	for chunk := range slices.Chunk(args, 5*1000) { // capped: appending the time leaves the next chunk be
		scored, err := column[string](tx.Raw(`WITH v (id, owner_id, score, intent, reason) AS (VALUES `+
			strings.TrimSuffix(strings.Repeat("(?, ?, CAST(? AS INTEGER), ?, ?), ", len(chunk)/5), ", ")+`)
			UPDATE matches SET score = v.score, intent = v.intent, reason = v.reason, scored_at = ?, lease_until = 0
			FROM v WHERE matches.id = v.id AND matches.owner_id = v.owner_id AND matches.score IS NULL
			RETURNING matches.owner_id || ' ' || matches.id`, append(chunk, now)...))
		if err != nil {
			return nil, err
		}
		for _, k := range scored {
			first[at[k]-1] = true
		}
	}
	return first, nil
}
