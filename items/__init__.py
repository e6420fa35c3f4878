"""The item vocabulary shared by every layer: the item and template schema, the helpers templates
call (`mc_item`, `tf_item`, ...), text rendering, plots and content hashing. Depends on nothing
else of itemsmith."""
