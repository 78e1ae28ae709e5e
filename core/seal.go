package core

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"errors"
)

// Sealer encrypts secrets at rest (cookie jars, webhook signing secrets)
// with AES-256-GCM. The key is the SHA-256 of the operator's secret, so
// any secret of at least 32 bytes serves.
type Sealer struct {
	aead cipher.AEAD
}

// NewSealer returns a Sealer keyed by secret.
func NewSealer(secret string) (*Sealer, error) {
	if len(secret) < 32 {
		return nil, errors.New("the secret key must be at least 32 bytes")
	}
	key := sha256.Sum256([]byte(secret))
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts plaintext; the random nonce leads the result. aad binds
// the ciphertext to its owner (an id), so a sealed value copied to
// another row does not open.
func (s *Sealer) Seal(plaintext, aad []byte) ([]byte, error) {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plaintext)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return s.aead.Seal(nonce, nonce, plaintext, aad), nil
}

// Open decrypts what Seal made with the same aad. Its error never holds
// any of the plaintext.
func (s *Sealer) Open(sealed, aad []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("sealed value is too short")
	}
	out, err := s.aead.Open(nil, sealed[:n], sealed[n:], aad)
	if err != nil {
		return nil, errors.New("sealed value does not open with this key: was EARSHOT_SECRET_KEY changed?")
	}
	return out, nil
}
