package legacymock

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/earshothq/earshot/core"
)

// Listing statuses (spec section 3).
var listingStatuses = []string{"active", "under-review", "under-review-duplicate", "sold", "removed", "login-wall", "unknown"}

// Categories and conditions follow facebook Marketplace's own lists, as
// slugs. The spec leaves them open.
var (
	listingCategories = []string{
		"antiques-collectibles", "arts-crafts", "baby-kids", "books-movies-music", "clothing-accessories",
		"electronics", "furniture", "garden-outdoor", "health-beauty", "home-goods", "home-improvement",
		"musical-instruments", "office-supplies", "pet-supplies", "sporting-goods", "toys-games",
		"vehicles", "miscellaneous",
	}
	listingConditions = []string{"new", "used-like-new", "used-good", "used-fair"}
)

const (
	defaultCategory  = "miscellaneous"
	defaultCondition = "used-good"
	defaultRadiusKm  = 10
	minRadiusKm      = 1
	maxRadiusKm      = 200
	maxImages        = 4
)

// listing is a marketplace listing published from a facebook account.
type listing struct {
	ListingID     string         `json:"listingId"`
	Title         string         `json:"title"`
	Price         string         `json:"price"`
	Location      string         `json:"location"`
	Images        []string       `json:"images"`
	AccountID     string         `json:"accountId"`
	Category      string         `json:"category"`
	Condition     string         `json:"condition"`
	LocationPoint *locationPoint `json:"locationPoint"`
	Status        string         `json:"status"`
	ListingURL    string         `json:"listingUrl"`
	PublishedAt   string         `json:"publishedAt"`
	UpdatedAt     string         `json:"updatedAt"`
}

type locationPoint struct {
	Lat      float64 `json:"lat"`
	Lng      float64 `json:"lng"`
	RadiusKm float64 `json:"radiusKm"`
}

// locationPointInput keeps absent radius apart from zero.
type locationPointInput struct {
	Lat      *float64 `json:"lat"`
	Lng      *float64 `json:"lng"`
	RadiusKm *float64 `json:"radiusKm"`
}

var errListingNotFound = core.Errorf(core.KindNotFound, "Listing not found")

func (st *state) findListing(id string) (int, *listing) {
	for i := range st.Listings {
		if st.Listings[i].ListingID == id {
			return i, &st.Listings[i]
		}
	}
	return -1, nil
}

// writeListing runs fn on the listing with the id under a write; an
// unknown id is errListingNotFound.
func (s *Server) writeListing(id string, fn func(st *state, l *listing) (result, error)) (reply, error) {
	return s.store.write(func(st *state) (result, error) {
		_, l := st.findListing(id)
		if l == nil {
			return result{}, errListingNotFound
		}
		return fn(st, l)
	})
}

// newListingID returns an unused 17-digit id with no leading zero, the
// shape of facebook's marketplace item ids.
func (st *state) newListingID() string {
	for {
		id := strconv.FormatInt(1e16+rand.Int64N(9e16), 10)
		if _, l := st.findListing(id); l == nil {
			return id
		}
	}
}

func oneOf(v string, allowed []string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	return false
}

// required trims a required text field and rejects it when blank.
func required(field, v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", core.Errorf(core.KindInvalid, "%s is required and must not be blank", field)
	}
	return v, nil
}

// cleanImages drops blank entries, keeps the first four and requires one.
func cleanImages(in []string) ([]string, error) {
	out := []string{}
	for _, im := range in {
		if im = strings.TrimSpace(im); im != "" && len(out) < maxImages {
			out = append(out, im)
		}
	}
	if len(out) == 0 {
		return nil, core.Errorf(core.KindInvalid, "a listing needs at least one image (1 to 4; the first is the cover)")
	}
	return out, nil
}

func checkCategory(v string) (string, error) {
	if v = strings.TrimSpace(v); !oneOf(v, listingCategories) {
		return "", core.Errorf(core.KindInvalid, "category must be one of %s", strings.Join(listingCategories, ", "))
	}
	return v, nil
}

func checkCondition(v string) (string, error) {
	if v = strings.TrimSpace(v); !oneOf(v, listingConditions) {
		return "", core.Errorf(core.KindInvalid, "condition must be one of %s", strings.Join(listingConditions, ", "))
	}
	return v, nil
}

// toPoint validates coordinates and clamps the radius to 1 to 200 km; an
// absent radius defaults to 10 km.
func toPoint(in locationPointInput) (*locationPoint, error) {
	if in.Lat == nil || in.Lng == nil || math.Abs(*in.Lat) > 90 || math.Abs(*in.Lng) > 180 {
		return nil, core.Errorf(core.KindInvalid, "locationPoint needs lat (-90 to 90) and lng (-180 to 180)")
	}
	r := float64(defaultRadiusKm)
	if in.RadiusKm != nil {
		r = math.Min(math.Max(*in.RadiusKm, minRadiusKm), maxRadiusKm)
	}
	return &locationPoint{Lat: *in.Lat, Lng: *in.Lng, RadiusKm: r}, nil
}

func (s *Server) listListings(context.Context, any) (any, error) {
	return s.store.read(func(st *state) (result, error) {
		return ok(map[string]any{"listings": st.Listings}), nil
	})
}

type createListingRequest struct {
	Title         string              `json:"title"`
	Price         string              `json:"price"`
	Location      string              `json:"location"`
	Images        []string            `json:"images"`
	AccountID     string              `json:"accountId"`
	Category      string              `json:"category"`
	Condition     string              `json:"condition"`
	LocationPoint *locationPointInput `json:"locationPoint"`
}

var decodeCreateListing = decodeBody[createListingRequest]

func (s *Server) createListing(_ context.Context, request any) (any, error) {
	req := request.(createListingRequest)
	l := listing{Category: defaultCategory, Condition: defaultCondition, Status: "under-review"}
	var err error
	if l.Title, err = required("title", req.Title); err != nil {
		return nil, err
	}
	if l.Price, err = required("price", req.Price); err != nil {
		return nil, err
	}
	if l.Location, err = required("location", req.Location); err != nil {
		return nil, err
	}
	if l.Images, err = cleanImages(req.Images); err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.Category) != "" {
		if l.Category, err = checkCategory(req.Category); err != nil {
			return nil, err
		}
	}
	if strings.TrimSpace(req.Condition) != "" {
		if l.Condition, err = checkCondition(req.Condition); err != nil {
			return nil, err
		}
	}
	if req.LocationPoint != nil {
		if l.LocationPoint, err = toPoint(*req.LocationPoint); err != nil {
			return nil, err
		}
	}
	return s.store.write(func(st *state) (result, error) {
		a, err := st.facebookAccount(req.AccountID)
		if err != nil {
			return result{}, err
		}
		l.AccountID = a.ID
		l.ListingID = st.newListingID()
		l.ListingURL = "https://www.facebook.com/marketplace/item/" + l.ListingID + "/"
		l.PublishedAt = s.store.stamp()
		l.UpdatedAt = l.PublishedAt
		st.Listings = append(st.Listings, l)
		return created(map[string]any{"listing": l, "listings": st.Listings}), nil
	})
}

type updateListingRequest struct {
	pathID
	Title         optional[string]             `json:"title"`
	Price         optional[string]             `json:"price"`
	Location      optional[string]             `json:"location"`
	Images        optional[[]string]           `json:"images"`
	AccountID     optional[string]             `json:"accountId"`
	Category      optional[string]             `json:"category"`
	Condition     optional[string]             `json:"condition"`
	LocationPoint optional[locationPointInput] `json:"locationPoint"`
}

var decodeUpdateListing = decodeBodyAt[updateListingRequest]("listingId", false)

// updateListing merges the given fields. listingId, listingUrl,
// publishedAt and status never change here; title, price, location and the
// photos are validated again, and only the first four images are kept.
func (s *Server) updateListing(_ context.Context, request any) (any, error) {
	req := request.(updateListingRequest)
	return s.writeListing(req.id, func(st *state, cur *listing) (result, error) {
		l := *cur
		var err error
		for _, f := range []struct {
			name string
			in   optional[string]
			dst  *string
		}{{"title", req.Title, &l.Title}, {"price", req.Price, &l.Price}, {"location", req.Location, &l.Location}} {
			if f.in.Set {
				if *f.dst, err = required(f.name, f.in.Value); err != nil {
					return result{}, err
				}
			}
		}
		if req.Images.Set {
			if l.Images, err = cleanImages(req.Images.Value); err != nil {
				return result{}, err
			}
		}
		if req.AccountID.Set && strings.TrimSpace(req.AccountID.Value) != "" {
			a, err := st.facebookAccount(req.AccountID.Value)
			if err != nil {
				return result{}, err
			}
			l.AccountID = a.ID
		}
		if req.Category.Set {
			if l.Category, err = checkCategory(req.Category.Value); err != nil {
				return result{}, err
			}
		}
		if req.Condition.Set {
			if l.Condition, err = checkCondition(req.Condition.Value); err != nil {
				return result{}, err
			}
		}
		if req.LocationPoint.Set {
			l.LocationPoint = nil
			if !req.LocationPoint.Null {
				if l.LocationPoint, err = toPoint(req.LocationPoint.Value); err != nil {
					return result{}, err
				}
			}
		}
		l.UpdatedAt = s.store.stamp()
		*cur = l
		return ok(map[string]any{"listing": l, "listings": st.Listings}), nil
	})
}

// The routes whose only input is the listing id in the path.
var (
	decodeDeleteListing    = decodePath("listingId")
	decodeGetListingStatus = decodePath("listingId")
)

// deleteListing removes the row entirely, unlike status "removed".
func (s *Server) deleteListing(_ context.Context, request any) (any, error) {
	id := request.(string)
	return s.store.write(func(st *state) (result, error) {
		i, l := st.findListing(id)
		if l == nil {
			return result{}, errListingNotFound
		}
		st.Listings = append(st.Listings[:i], st.Listings[i+1:]...)
		return ok(map[string]any{"listings": st.Listings}), nil
	})
}

func (s *Server) getListingStatus(_ context.Context, request any) (any, error) {
	id := request.(string)
	return s.store.read(func(st *state) (result, error) {
		_, l := st.findListing(id)
		if l == nil {
			return result{}, errListingNotFound
		}
		return ok(map[string]any{"listingId": l.ListingID, "status": l.Status, "title": l.Title}), nil
	})
}

type setListingStatusRequest struct {
	pathID
	Status string `json:"status"`
}

var decodeSetListingStatus = decodeBodyAt[setListingStatusRequest]("listingId", false)

// setListingStatus allows any move between the seven statuses; the spec
// forbids none.
func (s *Server) setListingStatus(_ context.Context, request any) (any, error) {
	req := request.(setListingStatusRequest)
	return s.writeListing(req.id, func(st *state, l *listing) (result, error) {
		if !oneOf(req.Status, listingStatuses) {
			return result{}, core.Errorf(core.KindInvalid, "status must be one of %s", strings.Join(listingStatuses, ", "))
		}
		l.Status = req.Status
		l.UpdatedAt = s.store.stamp()
		return ok(map[string]any{"listing": *l, "listings": st.Listings}), nil
	})
}
