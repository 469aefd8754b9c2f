# Filled by the GraphiT work (see the next commits).
target_sources(inductive_core PRIVATE
)
