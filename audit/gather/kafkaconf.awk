# The server.properties lines the gather sends: each logical line whose
# key is one of KKEYS (-v kk), as "START:LINE" with START its first
# physical line's number. Logical lines as java.util.Properties.load reads
# them: a line ending in an odd number of backslashes continues on the
# next, whose leading white space is dropped (an even number is escaped
# backslashes, and ends the line); a comment line (# or ! first) never
# continues; a continuation at the end of the file ends the line. The
# joined value may carry the next line's key (a password's): the Go side
# hides it (internal/redact); the key kaudit reads decides what is sent.
function oddbs(s,  n) {
	n = 0
	while (n < length(s) && substr(s, length(s) - n, 1) == "\\") n++
	return n % 2
}
function emit() {
	if (buf ~ ("^[ \t\f]*(" kk ")([ \t\f]*[=:]|[ \t\f]|$)")) print start ":" buf
	cont = 0
}
{ line = $0; sub(/\r$/, "", line) }
cont == 1 {
	sub(/^[ \t\f]+/, "", line)
	if (oddbs(line)) { buf = buf substr(line, 1, length(line) - 1); next }
	buf = buf line; emit(); next
}
line ~ /^[ \t\f]*[#!]/ { next }
{
	start = NR
	if (oddbs(line)) { buf = substr(line, 1, length(line) - 1); cont = 1; next }
	buf = line; emit()
}
END { if (cont == 1) emit() }
