"""Built-in connectors (filesystem, datagen, print, blackhole). Each module registers a
ConnectorFactory on import; third parties add theirs through the `streamsql.connectors`
entry point group (loaded by streamsql)."""
