package devsim

// Check Point Gaia's "show configuration" names the export time in its
// header ("# Exported by admin on ..."), new at every show.
func init() { perShowVolatile["checkpoint_gaia"] = true }
