# test/gpu/intercept.mk: GPU programs of the interception proof
# (test/gpu/10-interpose-intercept.sh).
GPU_PROGS += intercept_runtime intercept_driver
intercept_driver_NVFLAGS := -lcuda -ldl
