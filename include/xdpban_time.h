/* xdpban_time.h - units of time shared by the data path and userspace. The maps hold
 * CLOCK_BOOTTIME nanoseconds (xdpban_state.h) and the config holds seconds; convert with these,
 * never with a literal. */
#ifndef XDPBAN_TIME_H
#define XDPBAN_TIME_H

#define NS_PER_SEC 1000000000ull

#endif /* XDPBAN_TIME_H */
