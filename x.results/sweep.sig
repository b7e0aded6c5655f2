point,gen.algorithm,gen.gpus,gen.instances,protocol,platform,size_bytes,count,type,time_us,algbw_GBps,busbw_GBps,status,nominal_bytes
sizes 4096..16777216x4
