// Package redact is the one home of what kaudit never shows: the values of
// the keys Kafka treats as passwords, wherever they turn up in a value
// read from a host or a cluster, and the size of a value shown only to say
// it could not be used.
//
// Kafka's PASSWORD-type configurations (ConfigDef.Type.PASSWORD, which
// Kafka itself prints as [hidden]) are ssl.key.password,
// ssl.keystore.password, ssl.truststore.password, ssl.keystore.key,
// ssl.keystore.certificate.chain, ssl.truststore.certificates,
// sasl.jaas.config, sasl.oauthbearer.client.credentials.client.secret,
// sasl.oauthbearer.assertion.private.key.passphrase,
// password.encoder.secret, password.encoder.old.secret,
// delegation.token.secret.key and delegation.token.master.key, each also
// under a listener.name.LISTENER. prefix. Key covers them by their last
// part, and what connectors and JAAS use alike (password="…",
// *.credentials, basic.auth.user.info, -D…Password).
package redact

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Hidden replaces a value that is never shown.
const Hidden = "[hidden]"

// secretWords are the words that make a key's last part a secret's
// (password, keyStorePassword, client.secret, …).
var secretWords = []string{"password", "passwd", "passphrase", "secret", "credential"}

// secretLasts are last parts that are secrets only as a whole
// (ssl.keystore.key, ssl.keystore.certificate.chain,
// ssl.truststore.certificates, basic.auth.user.info).
var secretLasts = map[string]bool{"key": true, "chain": true, "certificates": true, "info": true}

// Key reports whether key's value is a secret: a key Kafka treats as a
// password (see the package comment), matched case-insensitively by its
// last dot-separated part, and sasl.jaas.config under any prefix.
func Key(key string) bool {
	k := strings.ToLower(strings.TrimSpace(key))
	if strings.HasSuffix(k, "jaas.config") {
		return true
	}
	last := k[strings.LastIndexByte(k, '.')+1:]
	if secretLasts[last] {
		return true
	}
	for _, w := range secretWords {
		if strings.Contains(last, w) {
			return true
		}
	}
	return false
}

// Value is key's value as kaudit may show it: Hidden when key is a
// secret's, else v with everything from the first secret assignment on
// hidden. A value can carry one when a line continuation joined the next
// line of server.properties to it ("8192\" then
// "ssl.truststore.password=…" is the value "8192ssl.truststore.password=…",
// as Java reads it), or a JAAS-like text (password="…").
func Value(key, v string) string {
	if Key(key) {
		return Hidden
	}
	return Text(v)
}

// Text is v with everything after the first assignment to a secret's key
// ("KEY=", "KEY:", "KEY =") replaced by Hidden; v itself when it has none.
func Text(v string) string {
	for i := 0; i < len(v); {
		start := i
		for i < len(v) && keyByte(v[i]) {
			i++
		}
		if i == start {
			i++
			continue
		}
		j := i
		for j < len(v) && (v[j] == ' ' || v[j] == '\t') {
			j++
		}
		if j < len(v) && (v[j] == '=' || v[j] == ':') && Key(v[start:i]) {
			return v[:j+1] + Hidden
		}
	}
	return v
}

// keyByte is a byte of a configuration key as they are written
// (ssl.truststore.password, listener.name.sasl_ssl.plain.sasl.jaas.config,
// javax.net.ssl.keyStorePassword).
func keyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// ExcerptRunes is how much of a value Excerpt keeps.
const ExcerptRunes = 40

// Excerpt is v as a short quoted excerpt for a message that says v could
// not be used: secrets hidden (Text), at most ExcerptRunes runes, and the
// size of what was cut ("\"8192ssl.truststore.password=[hidden]\"",
// "\"aaaa…\" (1048576 bytes)"). The quoting escapes control characters.
func Excerpt(v string) string {
	s := Text(v)
	if utf8.RuneCountInString(s) <= ExcerptRunes {
		return fmt.Sprintf("%q", s)
	}
	cut := s
	for n, i := 0, 0; i < len(s); n++ {
		if n == ExcerptRunes {
			cut = s[:i]
			break
		}
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return fmt.Sprintf("%q (%d bytes)", cut+"…", len(v))
}
