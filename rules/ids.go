package rules

// IDs lists every rule's ID in catalog order: the host rules (Catalog),
// then the cluster rules (ClusterCatalog).
func IDs() []string {
	var ids []string
	for _, r := range append(Catalog(), ClusterCatalog()...) {
		ids = append(ids, r.ID)
	}
	return ids
}
