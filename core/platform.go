package core

// Platform is a social network a phrase listens on.
type Platform string

// The platforms; Platforms lists them and Valid checks one.
const (
	Reddit   Platform = "reddit"
	X        Platform = "x"
	Facebook Platform = "facebook"
)

// Platforms lists every platform in the order the API shows them.
var Platforms = []Platform{Reddit, X, Facebook}

// Valid reports whether p is one of the known platforms.
func (p Platform) Valid() bool {
	switch p {
	case Reddit, X, Facebook:
		return true
	}
	return false
}

// ParsePlatform checks s and returns it as a Platform, or a KindInvalid
// error naming field.
func ParsePlatform(field, s string) (Platform, error) {
	p := Platform(s)
	if !p.Valid() {
		return "", Errorf(KindInvalid, "%s must be one of reddit, x, facebook", field)
	}
	return p, nil
}
