"""Policy over stored facts: calibration of thresholds and detector combinations, masking, mention
propagation and identities; stage entries ``calibration_stage`` and ``masking_stage``.
"""
