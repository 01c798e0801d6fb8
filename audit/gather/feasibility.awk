# feasibility.awk: the gather's feasibility lines from one `ls -ldn` of
# every /proc/sys entry of -v keys, the directories in ENVIRON["FD"]
# ("STATE PATH" lines: yes|no for a directory, writable or not, else
# notdir|absent) and /proc/self/ns/net, /proc/1/ns/net; then, when -v
# mounts=1, every mount of /proc/mounts. Output, in this order:
# "mode KEY PERMS", "netns-self LINK", "netns-init LINK", "dir STATE
# PERMS|- PATH", "mount ro|rw TYPE POINT".
{
	name = $0
	sub(/^[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ /, "", name)
	target = ""
	if ($0 ~ /^l/ && (k = index(name, " -> ")) > 0) { target = substr(name, k + 4); name = substr(name, 1, k - 1) }
	mode[name] = substr($0, 1, 10)
	link[name] = target
}
END {
	n = split(keys, ks, " ")
	for (i = 1; i <= n; i++) {
		p = "/proc/sys/" ks[i]
		gsub(/\./, "/", p)
		if (p in mode) print "mode " ks[i] " " mode[p]
	}
	print "netns-self " link["/proc/self/ns/net"]
	print "netns-init " link["/proc/1/ns/net"]
	n = split(ENVIRON["FD"], ds, "\n")
	for (i = 1; i <= n; i++) {
		if (ds[i] == "") continue
		w = ds[i]; sub(/ .*/, "", w)
		d = substr(ds[i], length(w) + 2)
		if (w == "yes" || w == "no") print "dir " w " " mode[d] " " d
		else print "dir " w " - " d
	}
	if (mounts == 1)
		while ((getline l < "/proc/mounts") > 0) { split(l, f, " "); split(f[4], o, ","); print "mount", o[1], f[3], f[2] }
}
