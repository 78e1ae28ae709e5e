package gormstore

import (
	"context"
	"errors"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// FilterArchiveStore keeps in filter_archives each phrase's last set of
// matches archived by its filters, in filter_archive_matches the set's
// members (migration 26). The flags themselves are match_triage's, as
// the inbox sets them.
type FilterArchiveStore struct{ db *DB }

var _ ports.FilterArchiveStore = (*FilterArchiveStore)(nil)

func NewFilterArchiveStore(db *DB) *FilterArchiveStore { return &FilterArchiveStore{db: db} }

type archiveSetRow struct {
	ID                string `gorm:"primaryKey"`
	OwnerID, PhraseID string
	Matches           int64
	CreatedAt         int64 `gorm:"autoCreateTime:false"`
}

func (archiveSetRow) TableName() string { return "filter_archives" }

func (r archiveSetRow) set() core.ArchiveSet {
	return core.ArchiveSet{ID: r.ID, OwnerID: r.OwnerID, PhraseID: r.PhraseID, Matches: int(r.Matches), CreatedAt: fromMicros(r.CreatedAt)}
}

// PhraseMatches implements ports.FilterArchiveStore: a walk of
// matches_phrase_created. The archived are left out with NOT EXISTS,
// which Postgres estimates from match_triage's own figures: a filter on
// the outer join's COALESCE gets a fixed guess of very few rows, so it
// sorted every match of the phrase rather than walk the index to the
// limit.
func (s *FilterArchiveStore) PhraseMatches(ctx context.Context, ownerID, phraseID string, limit int, unarchived bool, each func(core.Match, bool) bool) (bool, error) {
	q := s.db.with(ctx).Table(inboxJoin).Select(inboxColumns).Where("m.phrase_id = ? AND m.owner_id = ?", phraseID, ownerID)
	if unarchived {
		q = q.Where("NOT EXISTS (SELECT 1 FROM match_triage a WHERE a.owner_id = m.owner_id AND a.match_id = m.id AND a.archived <> 0)")
	}
	q = q.Order("m.created_us DESC").Limit(limit + 1)
	rows, err := q.Rows()
	if err != nil {
		return false, translate(err, "match")
	}
	defer rows.Close()
	for n := 0; rows.Next(); n++ {
		if n == limit {
			return true, nil
		}
		var r inboxRow
		if err := q.ScanRows(rows, &r); err != nil {
			return false, translate(err, "match")
		}
		if !each(r.Match.match(), r.Archived != 0) {
			return false, nil
		}
	}
	return false, translate(rows.Err(), "match")
}

// ArchiveSet implements ports.FilterArchiveStore. The members are
// chosen in SQL among ids, so a match of another owner or phrase, or one
// archived already, never joins the set. The phrase's row is locked, so
// of two sets made at once on Postgres the later replaces the earlier
// rather than missing it; NO KEY, so matches stored meanwhile do not wait.
// A set that archives nothing is rolled back, so the phrase's set, and
// its undo, stay.
func (s *FilterArchiveStore) ArchiveSet(ctx context.Context, ownerID, phraseID string, ids []string, at time.Time) (core.ArchiveSet, error) {
	row := archiveSetRow{ID: newID(), OwnerID: ownerID, PhraseID: phraseID, CreatedAt: micros(at)}
	err := s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Clauses(lockNoKeyUpdate).Select("id").Take(&phraseRow{}, "id = ? AND owner_id = ?", phraseID, ownerID).Error; err != nil {
			return err
		}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		for chunk := range slices.Chunk(ids, 500) {
			res := tx.Exec(`INSERT INTO filter_archive_matches (archive_id, match_id)
				SELECT ?, m.id FROM matches m LEFT JOIN match_triage t ON t.owner_id = m.owner_id AND t.match_id = m.id
				WHERE m.owner_id = ? AND m.phrase_id = ? AND m.id IN ? AND COALESCE(t.archived, 0) = 0
				ON CONFLICT DO NOTHING`, row.ID, ownerID, phraseID, chunk)
			if res.Error != nil {
				return res.Error
			}
			row.Matches += res.RowsAffected
		}
		if row.Matches == 0 {
			return errNothingArchived
		}
		if err := tx.Where("phrase_id = ? AND id <> ?", phraseID, row.ID).Delete(&archiveSetRow{}).Error; err != nil {
			return err
		}
		if err := tx.Exec(`INSERT INTO match_triage (owner_id, match_id, created_us, is_read, starred, archived, updated_at)
			SELECT m.owner_id, m.id, m.created_us, 0, 0, 1, ? FROM filter_archive_matches a JOIN matches m ON m.id = a.match_id
			WHERE a.archive_id = ?
			ON CONFLICT (owner_id, match_id) DO UPDATE SET archived = 1, updated_at = excluded.updated_at`, row.CreatedAt, row.ID).Error; err != nil {
			return err
		}
		return tx.Model(&row).Update("matches", row.Matches).Error
	})
	if errors.Is(err, errNothingArchived) {
		return core.ArchiveSet{}, nil
	}
	if err != nil {
		return core.ArchiveSet{}, translate(err, "phrase")
	}
	return row.set(), nil
}

// errNothingArchived rolls back a set that archived nothing.
var errNothingArchived = errors.New("nothing archived")

// LatestArchiveSet implements ports.FilterArchiveStore.
func (s *FilterArchiveStore) LatestArchiveSet(ctx context.Context, ownerID, phraseID string) (core.ArchiveSet, error) {
	return one(s.db.with(ctx).Order("created_at DESC"), "archived set", archiveSetRow.set, "phrase_id = ? AND owner_id = ?", phraseID, ownerID)
}

// RestoreArchiveSet implements ports.FilterArchiveStore. The set's row
// is locked, so of two restores at once on Postgres the second finds it
// gone, as it would after the first.
func (s *FilterArchiveStore) RestoreArchiveSet(ctx context.Context, ownerID, id string) (int, error) {
	n := 0
	_, err := locked(s.db.write(ctx), func(tx *gorm.DB, row *archiveSetRow) error {
		res := tx.Exec(`UPDATE match_triage SET archived = 0, updated_at = ?
			WHERE owner_id = ? AND archived = 1 AND match_id IN (SELECT match_id FROM filter_archive_matches WHERE archive_id = ?)`,
			tx.NowFunc().UnixMicro(), ownerID, id)
		if res.Error != nil {
			return res.Error
		}
		n = int(res.RowsAffected)
		return tx.Delete(row).Error
	}, "id = ? AND owner_id = ?", id, ownerID)
	if err != nil {
		return 0, translate(err, "archived set")
	}
	return n, nil
}
