DROP TABLE running_timer_tags;
DROP TABLE running_timers;
