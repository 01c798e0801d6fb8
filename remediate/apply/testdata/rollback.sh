M='KAUDIT_000000000000000000000001'
KDIR='/var/lib/kaudit'
RUNS='/var/lib/kaudit/runs'
RUNID='20260102T030405Z-1a2b3c4d'
OPERATOR='unknown'
KPID='0'
KPSTART='0'
TTL='300'
LOCKWAIT='5'
TAKEOVER='-'
RUN='/var/lib/kaudit/runs/20260102T030405Z-1a2b3c4d'
FORCE='0'
RELEASE='0'
ETHTOOL='0'
FILES='restore-file-0	/opt/kafka/config/server.properties	present	fe3209d6d4f51935b391288a43df48d9ddece1a992597ae53387ca16611a9179	/var/lib/kaudit/runs/20260102T030405Z-1a2b3c4d/file-0	-
restore-file-1	/etc/sysctl.d/99-kaudit.conf	absent	-	-	-
'
VALUES='restore-sysctl-0	net.core.somaxconn	sysctl	/proc/sys/net/core/somaxconn	-	-	128	4096
'
# [embedded: internal/remote.SayFunc]
# [embedded: remediate/apply/sh/lib.sh]
# [embedded: remediate/apply/sh/rollback.sh]
